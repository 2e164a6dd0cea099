package verify

import (
	"os"
	"path/filepath"
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

// writeTree writes files under a new temporary folder and returns it.
func writeTree(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for p, b := range files {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
