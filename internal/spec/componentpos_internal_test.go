package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// The positions a document keeps from its first read (comps) are those its
// tree gives when read again, for every component of the examples and of
// the valid and invalid cases, and for a path a component lacks.
func TestComponentPositionsMatchTheTree(t *testing.T) {
	t.Parallel()
	var files []string
	for _, root := range []string{"../../examples", "testdata"} {
		err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && (filepath.Base(p) == "app.yaml" || filepath.Base(p) == "app.json") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(f, data)
		if err != nil || d.comps == nil {
			continue // not in the fast reader's subset, or no components
		}
		tree, err := Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		tree.comps = nil
		for i := range len(d.comps) + 1 {
			for _, p := range []Path{{"components", i, "workload_spec"}, {"components", i, "workload_spec", "resources"},
				{"components", i, "workload_spec", "replicas"}, {"components", i, "workload_spec", "port"}, {"components", i}} {
				got, gok := d.posAt(p)
				want, wok := tree.posAt(p)
				if got != want || gok != wok {
					t.Errorf("%s: %s at %v (%v), the tree says %v (%v)", f, p, got, gok, want, wok)
				}
				checked++
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d positions checked", checked)
	}
}
