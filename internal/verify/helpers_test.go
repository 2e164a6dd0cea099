package verify

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// examplesDir is the repository's examples apps repository.
const examplesDir = "../../examples"

// loadExamples loads the example specs.
func loadExamples(t testing.TB) *load.Repo {
	t.Helper()
	return spectest.Load(t, examplesDir)
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
