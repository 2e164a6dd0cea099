package gitrepo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
)

// TestCompare: the comparison names what Land would write and delete, with
// the bytes before and after, and changes nothing on either side.
func TestCompare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url := srv.CreateRepo(t, "fleet.git", "main", map[string]string{
		"README.md":                 "fleet\n",
		"apps/a/same.yaml":          "same\n",
		"apps/a/old.yaml":           "old\n",
		"apps/a/gone.yaml":          "gone\n",
		"apps/a/kept.txt":           "by hand\n",
		"apps/a/dir-becomes-file/x": "x\n",
		"outside/untouched.yaml":    "outside\n",
	})
	bare := srv.Path("fleet.git")
	head := revParse(t, bare, "main")
	dir := t.TempDir()
	r, err := gitrepo.Sync(ctx, dir, gitrepo.Remote{URL: url}, "main", gitrepo.Bare())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	objects := gittest.Git(t, dir, "count-objects")
	ch := change("update", map[string]string{
		"apps/a/same.yaml":        "same\n",
		"apps/a/old.yaml":         "new\n",
		"apps/a/added.yaml":       "added\n",
		"apps/a/dir-becomes-file": "file\n",
	}, "apps")
	ch.Keep = func(_ string, b []byte) bool { return string(b) == "by hand\n" }

	got, err := r.Compare(ctx, "main", ch)
	if err != nil {
		t.Fatal(err)
	}
	want := gitrepo.Comparison{
		Base: head,
		Files: []gitrepo.FileChange{
			{Path: "apps/a/added.yaml", New: []byte("added\n"), Added: true},
			{Path: "apps/a/dir-becomes-file", New: []byte("file\n"), Added: true},
			{Path: "apps/a/dir-becomes-file/x", Old: []byte("x\n"), Deleted: true},
			{Path: "apps/a/gone.yaml", Old: []byte("gone\n"), Deleted: true},
			{Path: "apps/a/old.yaml", Old: []byte("old\n"), New: []byte("new\n")},
		},
		Stats: gitrepo.Stats{Written: 2 + 1, Deleted: 2, Unchanged: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	if now := revParse(t, bare, "main"); now != head {
		t.Errorf("the remote moved to %s", now)
	}
	if now := gittest.Git(t, dir, "count-objects"); now != objects {
		t.Errorf("Compare stored objects: %s, before %s", now, objects)
	}

	// Nothing differs: no files.
	same := change("update", map[string]string{"outside/untouched.yaml": "outside\n"}, "outside")
	if got, err := r.Compare(ctx, "main", same); err != nil || len(got.Files) != 0 || got.Stats.Unchanged != 1 {
		t.Errorf("Compare of the same files = %+v, %v", got, err)
	}
	if _, err := r.Compare(ctx, "nope", same); !errors.Is(err, gitrepo.ErrBranchNotFound) {
		t.Errorf("Compare with a missing branch: %v, want ErrBranchNotFound", err)
	}
}
