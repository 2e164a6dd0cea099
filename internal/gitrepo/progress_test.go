package gitrepo_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
)

// A clone over smart HTTP passes the server's progress messages to the
// writer WithProgress names.
func TestSyncProgress(t *testing.T) {
	t.Parallel()
	srv := gittest.NewServer(t)
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("x", i) + "\n"
	}
	srv.CreateRepo(t, "fleet.git", "main", files)
	remote := gitrepo.Remote{URL: srv.RepoURL("fleet.git")}

	var progress bytes.Buffer
	dir := t.TempDir()
	r, err := gitrepo.Sync(context.Background(), dir, remote, "main", gitrepo.Bare(), gitrepo.WithProgress(&progress))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if !strings.Contains(progress.String(), "objects") {
		t.Errorf("clone progress = %q, want the server's object counts", progress.String())
	}
}
