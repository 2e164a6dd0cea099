// Package spectest loads specs in tests as render does offline: with the
// loader of the built-in charts' exports (an empty catalog) and no template
// folder. Load and LoadFiles fail the test on any error problem; Loader is
// for the tests that look at the problems themselves.
package spectest

import (
	"os"
	"testing"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// Loader returns the offline loader: the built-in charts' exports, no
// template folder.
func Loader(t testing.TB) *spec.Loader {
	t.Helper()
	l, err := spec.NewLoader(exports.Catalog{}, "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Load loads the specs of the folder dir (platform.yaml and
// apps/…/app.yaml), failing t when they have an error.
func Load(t testing.TB, dir string) *spec.Repo {
	t.Helper()
	repo, ps := Loader(t).Load(os.DirFS(dir))
	if ps.HasErrors() {
		t.Fatalf("invalid specs in %s:\n%v", dir, ps)
	}
	return repo
}

// LoadFiles loads the specs of files (contents by slash path), failing t
// when they have an error.
func LoadFiles(t testing.TB, files map[string][]byte) *spec.Repo {
	t.Helper()
	repo, ps := Loader(t).LoadFiles(files)
	if ps.HasErrors() {
		t.Fatalf("invalid specs:\n%v", ps)
	}
	return repo
}
