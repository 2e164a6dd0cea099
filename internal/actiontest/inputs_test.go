package actiontest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeBins puts render and verify programs in the runner's RUNNER_TEMP that
// print their name and then each argument on its own line.
func fakeBins(t *testing.T, r *runner) {
	t.Helper()
	bin := filepath.Join(r.temp, "fleetwright-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"render", "verify"} {
		script := "#!/usr/bin/env bash\necho " + name + "\nprintf '%s\\n' \"$@\"\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestActionArgs checks that the args input reaches the program as all its
// words, over every line of a multi-line input, never globbed or evaluated.
func TestActionArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		inputs map[string]string
		want   []string
	}{
		{
			name:   "multi-line",
			inputs: map[string]string{"command": "validate", "args": "--format json\n--check\n"},
			want:   []string{"render", "validate", "--format", "json", "--check", "."},
		},
		{
			name:   "indented lines, tabs and CRLF",
			inputs: map[string]string{"command": "history", "args": "  shop/api\r\n\t--limit\t 5 \r\n\n"},
			want:   []string{"render", "history", "shop/api", "--limit", "5"},
		},
		{
			name:   "glob and shell text stay words",
			inputs: map[string]string{"command": "verify", "args": "*\n--apps '$(touch pwned)'\n`id` ~ \\n", "path": "fleet"},
			want:   []string{"verify", "*", "--apps", "'$(touch", "pwned)'", "`id`", "~", "\\n", "fleet"},
		},
		{
			name:   "preview",
			inputs: map[string]string{"command": "preview", "mode": "push", "fleet-repo": "https://github.com/acme/fleet", "args": "--close"},
			want:   []string{"render", "preview", "--repo", ".", "--mode", "push", "--fleet-repo", "https://github.com/acme/fleet", "--close"},
		},
		{
			name:   "empty",
			inputs: map[string]string{"command": "render", "args": ""},
			want:   []string{"render", "."},
		},
		{
			name:   "only white space",
			inputs: map[string]string{"command": "scale", "args": " \n\t\n"},
			want:   []string{"render", "scale"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			fakeBins(t, r)
			// Files for a glob to match, were the words globbed.
			for _, f := range []string{"a.yaml", "b.yaml"} {
				if err := os.WriteFile(filepath.Join(r.temp, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res := r.runStep("run", tt.inputs)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stdout)
			}
			got := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("program's arguments (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(filepath.Join(r.temp, "pwned")); err == nil {
				t.Error("the args input was evaluated")
			}
		})
	}
}

// TestActionUnknownCommand checks that an unknown command input cannot
// inject workflow commands: it yields one ::error:: line, its value escaped.
func TestActionUnknownCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		want    string // the escaped value in the error line
	}{
		{"newline and set-output", "nope\n::set-output name=pr-url::https://evil.example", "nope%0A::set-output name=pr-url::https://evil.example"},
		{"CRLF and percent", "x%0A::add-mask::y\r\n::warning::z", "x%250A::add-mask::y%0D%0A::warning::z"},
		{"trailing newline", "renderr\n", "renderr%0A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			fakeBins(t, r)
			res := r.runStep("run", map[string]string{"command": tt.command})
			if res.code != 2 {
				t.Errorf("exit %d, want 2", res.code)
			}
			var commands []string
			for _, l := range strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n") {
				if strings.HasPrefix(strings.TrimLeft(l, " \t\r"), "::") {
					commands = append(commands, l)
				}
			}
			want := []string{"::error::unknown command '" + tt.want + "': use validate, render, review, diff, verify, promote, preview, new, pause, resume, scale, rollback, delete, history or template"}
			if diff := cmp.Diff(want, commands); diff != "" {
				t.Errorf("workflow commands (-want +got):\n%s\nstdout:\n%s", diff, res.stdout)
			}
			if len(res.outputs) != 0 {
				t.Errorf("outputs: %v", res.outputs)
			}
		})
	}
}

// TestActionTokenMask checks that the token is masked as one value, even
// with a "%" or a newline in it.
func TestActionTokenMask(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	fakeBins(t, r)
	res := r.runStep("run", map[string]string{"command": "history", "github.token": "ghs_%x\n::set-output name=a::b"})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	want := "::add-mask::ghs_%25x%0A::set-output name=a::b\nrender\nhistory\n"
	if diff := cmp.Diff(want, res.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}
