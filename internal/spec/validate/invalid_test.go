package validate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// TestInvalidSpecs loads each case of testdata/invalid/<case>/ and
// compares its problems with <case>.txt.
func TestInvalidSpecs(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir("testdata/invalid")
	if err != nil {
		t.Fatal(err)
	}
	dirs = slices.DeleteFunc(dirs, func(d os.DirEntry) bool { return !d.IsDir() })
	if len(dirs) < 15 {
		t.Fatalf("only %d invalid cases", len(dirs))
	}
	for _, d := range dirs {
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			root := filepath.Join("testdata/invalid", d.Name())
			_, ps := spectest.CatalogLoader(t, "").Load(os.DirFS(root))
			if !ps.HasErrors() {
				t.Fatalf("no error for %s", d.Name())
			}
			var got strings.Builder
			for _, p := range ps {
				got.WriteString(p.Error() + "\n")
			}
			golden.File(t, filepath.Join("testdata/invalid", d.Name()+".txt"), got.String())
		})
	}
}
