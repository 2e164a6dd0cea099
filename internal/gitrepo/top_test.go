package gitrepo_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
)

func TestFindTop(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	worktree := filepath.Join(base, "wt") // a linked work tree has a .git file
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "apps", "shop"), filepath.Join(worktree, "fleet"), filepath.Join(base, "plain")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: ../repo/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, top, rel string
		ok            bool
	}{
		{repo, repo, ".", true},
		{filepath.Join(repo, "apps", "shop"), repo, "apps/shop", true},
		{filepath.Join(worktree, "fleet"), worktree, "fleet", true},
		{filepath.Join(base, "plain"), "", "", false},
	}
	for _, tt := range tests {
		top, rel, ok := gitrepo.FindTop(tt.dir)
		if top != tt.top || rel != tt.rel || ok != tt.ok {
			t.Errorf("FindTop(%s) = %q, %q, %v; want %q, %q, %v", tt.dir, top, rel, ok, tt.top, tt.rel, tt.ok)
		}
	}
}
