package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProgress(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	tests := []struct {
		name     string
		terminal bool
		want     string
	}{
		{
			name: "log: updates and lines, no stages",
			want: "build 1/2 a: building\nbuild 1/2 a: failed: boom\n    | output\nbuild 2/2 b: building\n" + long + "\n",
		},
		{
			name:     "terminal: one line rewritten in place, lines above it",
			terminal: true,
			want: "\rgenerating 3 app(s)\x1b[K" +
				"\rbuild 1/2 a: building\x1b[K" +
				"\r\x1b[Kbuild 1/2 a: failed: boom\n\rbuild 1/2 a: building\x1b[K" +
				"\r\x1b[K    | output\n\rbuild 1/2 a: building\x1b[K" +
				"\rbuild 2/2 b: building\x1b[K" +
				"\r" + strings.Repeat("x", maxStatus-1) + "…\x1b[K" +
				"\r\x1b[K",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			p := NewProgress(&b, tc.terminal)
			p.Stage("generating 3 app(s)")
			p.Update("build 1/2 a: building")
			p.Print("build 1/2 a: failed: boom")
			p.Print("    | output")
			p.Update("build 2/2 b: building")
			p.Update(long)
			p.Done()
			p.Done() // a second Done writes nothing
			if d := cmp.Diff(tc.want, b.String()); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
		})
	}
}

func TestIsTerminal(t *testing.T) {
	t.Parallel()
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is not a terminal")
	}
}

// A Git remote's progress, written in pieces with \r between updates,
// becomes one status line per message on a terminal and nothing in a log.
func TestStageWriter(t *testing.T) {
	t.Parallel()
	remote := []string{"Counting obj", "ects:  50% (1/2)\rCounting objects: 100% (2/2)\r", "Counting objects: 100% (2/2), done.\n", "  \n"}
	for _, terminal := range []bool{false, true} {
		var b bytes.Buffer
		p := NewProgress(&b, terminal)
		w := p.StageWriter()
		for _, s := range remote {
			if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", s, n, err)
			}
		}
		p.Done()
		want := ""
		if terminal {
			want = "\rCounting objects:  50% (1/2)\x1b[K" +
				"\rCounting objects: 100% (2/2)\x1b[K" +
				"\rCounting objects: 100% (2/2), done.\x1b[K" +
				"\r\x1b[K"
		}
		if d := cmp.Diff(want, b.String()); d != "" {
			t.Errorf("terminal=%v (-want +got):\n%s", terminal, d)
		}
	}
}
