package verify

import (
	"os"
	"testing"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// examplesDir is the repository's examples apps repository.
const examplesDir = "../../examples"

// loadExamples loads the example specs.
func loadExamples(t testing.TB) *spec.Repo {
	t.Helper()
	l, err := spec.NewLoader(exports.Catalog{}, "")
	if err != nil {
		t.Fatal(err)
	}
	repo, ps := l.Load(os.DirFS(examplesDir))
	if ps.HasErrors() {
		t.Fatalf("invalid examples:\n%v", ps)
	}
	return repo
}

// renderExamples renders the examples as render does offline.
func renderExamples(t testing.TB) map[string][]byte {
	t.Helper()
	repo := loadExamples(t)
	f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	return f.Map()
}
