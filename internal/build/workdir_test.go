package build

import (
	"os"
	"path/filepath"
	"testing"
)

// runWorkDir is a work folder for RUN builds: the test's temporary
// folder, whose parent (the test's own, mode 0700) is made searchable so
// that, as root, the user namespace's root reaches the root filesystems
// (see makeWorkDir).
func runWorkDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}
