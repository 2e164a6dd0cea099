package verify

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// The two renders that move a fleet's Flux objects from flux-system to
// their project's namespace each verify without drift: the first (the
// Kustomizations still in flux-system, prune: false) is what render
// writes over the fleet before it, not the second step.
func TestNamespaceMoveHasNoDrift(t *testing.T) {
	t.Parallel()
	repo := spectest.Load(t, "../generate/testdata/specs/seed")
	before := map[string][]byte{}
	dir := "../generate/testdata/move/seed"
	if err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		before[p], err = os.ReadFile(filepath.Join(dir, p))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	render := func(prev map[string][]byte) map[string][]byte {
		t.Helper()
		f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform, Previous: generate.FileIn(prev)})
		if err != nil {
			t.Fatal(err)
		}
		return f.Map()
	}
	first := render(before)
	second := render(first)
	for name, fleet := range map[string]map[string][]byte{"first step": first, "second step": second} {
		rep := verifyFleet(t, maps.Clone(fleet), Options{Platform: &repo.Platform, Apps: &Apps{Repo: repo}})
		if diff := cmp.Diff([]string{}, lines(rep, CheckDrift)); diff != "" {
			t.Errorf("%s: drift (-want +got):\n%s", name, diff)
		}
	}
}

// The two renders that remove a project whose last app went each verify
// without drift and without findings: the first keeps the project's file
// (its Namespace marked, its account and binding), which is what render
// writes over the fleet before it, not the second step; the second holds
// nothing of the project.
func TestEmptiedProjectHasNoDrift(t *testing.T) {
	t.Parallel()
	l := spectest.Loader(t)
	dir := "../generate/testdata/specs/seed"
	repo, ps := l.Load(os.DirFS(dir))
	if ps.HasErrors() {
		t.Fatal(ps)
	}
	plat, err := os.ReadFile(filepath.Join(dir, "platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	empty, ps := l.LoadFiles(map[string][]byte{"platform.yaml": plat})
	if ps.HasErrors() {
		t.Fatal(ps)
	}
	render := func(repo *load.Repo, prev map[string][]byte) map[string][]byte {
		t.Helper()
		opts := generate.Options{Platform: &repo.Platform}
		opts.Over(prev)
		f, err := generate.Render(repo, opts)
		if err != nil {
			t.Fatal(err)
		}
		return f.Map()
	}
	first := render(empty, render(repo, nil))
	if len(first) != 1 {
		t.Fatalf("the first step holds %d files, want the project's file", len(first))
	}
	second := render(empty, first)
	for name, fleet := range map[string]map[string][]byte{"first step": first, "second step": second} {
		rep := verifyFleet(t, maps.Clone(fleet), Options{Platform: &empty.Platform, Apps: &Apps{Repo: empty}})
		if diff := cmp.Diff([]string{}, lines(rep)); diff != "" {
			t.Errorf("%s: findings (-want +got):\n%s", name, diff)
		}
	}
}
