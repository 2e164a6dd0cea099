package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// render validate prints each invalid case of the spec package exactly as
// its golden file has it (file:line:col: path: message), and exits 1.
func TestValidateInvalidCases(t *testing.T) {
	t.Parallel()
	const cases = "../../internal/spec/validate/testdata/invalid"
	dirs, err := os.ReadDir(cases)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		// The spec package's catalog stand-in knows two addon types, and
		// this case's message lists them.
		if !d.IsDir() || d.Name() == "addon-exports-on-catalog-type" {
			continue
		}
		n++
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(cases, d.Name())
			want, err := os.ReadFile(root + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			r := runCmd(t, nil, "validate", root)
			got := strings.ReplaceAll(r.stdout, root+string(filepath.Separator), "")
			if r.code != 1 {
				t.Errorf("exit %d, want 1\n%s", r.code, r.stderr)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("render validate (-golden +got):\n%s", d)
			}
		})
	}
	if n < 40 {
		t.Errorf("only %d invalid cases", n)
	}
}

// Every field of real applications, valid, passes render validate.
func TestValidateRealApplication(t *testing.T) {
	t.Parallel()
	r := runCmd(t, nil, "validate", "../../internal/spec/load/testdata/valid")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "1 app(s), 8 component(s): valid") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
