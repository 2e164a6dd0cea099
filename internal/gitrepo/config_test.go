package gitrepo_test

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
)

func TestRemoteURLAndUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "--quiet", "--initial-branch=main")
	gittest.Git(t, dir, "remote", "add", "origin", "https://git.example.test/acme/apps.git")
	gittest.Git(t, dir, "config", "user.name", "Ada Lovelace")
	gittest.Git(t, dir, "config", "user.email", "ada@example.test")
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if u, err := r.RemoteURL("origin"); err != nil || u != "https://git.example.test/acme/apps.git" {
		t.Errorf("RemoteURL(origin) = %q, %v", u, err)
	}
	if _, err := r.RemoteURL("upstream"); err == nil {
		t.Error("RemoteURL of a missing remote: no error")
	}
	if sig, ok := r.ConfigUser(); !ok || sig.Name != "Ada Lovelace" || sig.Email != "ada@example.test" {
		t.Errorf("ConfigUser() = %v, %v", sig, ok)
	}
}
