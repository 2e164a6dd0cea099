package load_test

import (
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// ReadFiles reads what Load reads: loading its files gives the same apps,
// templated ones included, as loading the folder.
func TestReadFilesLoadsAsTheFolder(t *testing.T) {
	t.Parallel()
	fsys := os.DirFS("../../../examples")
	files, err := load.ReadFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"platform.yaml", "templates/web-with-db/template.yaml"} {
		if _, ok := files[want]; !ok {
			t.Errorf("ReadFiles did not read %s; read %v", want, slices.Sorted(maps.Keys(files)))
		}
	}
	l := spectest.Loader(t)
	fromDir, dirProblems := l.Load(fsys)
	fromFiles, fileProblems := l.LoadFiles(files)
	if len(dirProblems) > 0 || len(fileProblems) > 0 {
		t.Fatalf("problems: folder %v, files %v", dirProblems, fileProblems)
	}
	keys := func(r *load.Repo) (out []string) {
		for _, a := range r.Apps {
			out = append(out, a.Key()+" "+a.File)
		}
		return out
	}
	if d := cmp.Diff(keys(fromDir), keys(fromFiles)); d != "" {
		t.Errorf("apps (-folder +files):\n%s", d)
	}
	if len(fromDir.Apps) == 0 {
		t.Error("the examples loaded no apps")
	}
}
