package gitrepo_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
)

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	dir := golden.TempFiles(t, map[string]string{"apps/a/app.yaml": "a\n", "apps/b/app.yaml": "b\n", "apps/b/notes.md": "n\n", "run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := gitrepo.WriteFiles(dir, bytesMap(map[string]string{
		"apps/a/app.yaml": "a2\n", "apps/c/d/app.json": "{}\n", "run.sh": "#!/bin/sh\nexit 0\n", "apps/b/app.yaml": "b again\n",
	}), []string{"apps/b"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"apps/a/app.yaml": "a2\n", "apps/b/app.yaml": "b again\n", "apps/c/d/app.json": "{}\n", "run.sh": "#!/bin/sh\nexit 0\n"}
	if d := cmp.Diff(want, golden.ReadFiles(t, dir)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	for p, mode := range map[string]os.FileMode{"run.sh": 0o755, "apps/a/app.yaml": 0o644, "apps/c/d/app.json": 0o644} {
		if got := statFile(t, filepath.Join(dir, p)).Mode().Perm(); got != mode {
			t.Errorf("%s: mode %v, want %v", p, got, mode)
		}
	}
	// Only removing works too, and a path that is not there is no error.
	if err := gitrepo.WriteFiles(dir, nil, []string{"apps/c", "apps/none"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "apps/c")); !os.IsNotExist(err) {
		t.Errorf("apps/c still there: %v", err)
	}
}

func TestConfigUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, "", "init", "--quiet", "--initial-branch=main", dir)
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	gittest.Git(t, dir, "config", "user.name", "Erin")
	if sig, ok := r.ConfigUser(); ok && sig.Email == "" {
		t.Errorf("ConfigUser with no email = %v, %v", sig, ok)
	}
	gittest.Git(t, dir, "config", "user.email", "erin@example.com")
	sig, ok := r.ConfigUser()
	if !ok || sig != (gitrepo.Signature{Name: "Erin", Email: "erin@example.com"}) {
		t.Errorf("ConfigUser = %v, %v", sig, ok)
	}
}
