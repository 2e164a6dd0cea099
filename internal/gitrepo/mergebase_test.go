package gitrepo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
)

// The merge base of a branch and the branch it left is where it left it,
// however far either has moved since.
func TestMergeBase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	commit := func(file string) string {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", file)
		return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	}
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	commit("a")
	fork := commit("b")
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	commit("c")
	gittest.Git(t, dir, "checkout", "-q", "main")
	commit("d")
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, pair := range [][2]string{{"main", "feature"}, {"feature", "main"}, {"main~1", "feature"}} {
		if got, err := r.MergeBase(pair[0], pair[1]); err != nil || got != fork {
			t.Errorf("MergeBase(%s, %s) = %s, %v; want %s", pair[0], pair[1], got, err, fork)
		}
	}
	if _, err := r.MergeBase("main", "nope"); err == nil {
		t.Error("MergeBase of an unknown revision: no error")
	}
}
