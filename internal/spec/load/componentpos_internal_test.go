package load

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
	for _, root := range []string{"../../../examples", "testdata", "../validate/testdata"} {
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

// FuzzComponentPositions: for any file the fast reader reads, the
// positions kept from the first read are the tree's.
func FuzzComponentPositions(f *testing.F) {
	f.Add([]byte("name: a\ncomponents:\n  - name: web\n    workload_spec: {image: x, replicas: 2, resources: {}}\n"))
	f.Add([]byte("components:\n- workload_spec:\n    replicas: 1\n- name: b\n  workload_spec: [1]\n"))
	f.Add([]byte("components: {workload_spec: 1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse("app.yaml", data)
		if err != nil || d.comps == nil {
			return
		}
		tree, err := Parse("app.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		tree.comps = nil
		for i := range len(d.comps) + 1 {
			for _, p := range []Path{{"components", i, "workload_spec"}, {"components", i, "workload_spec", "resources"},
				{"components", i, "workload_spec", "replicas"}} {
				got, gok := d.posAt(p)
				want, wok := tree.posAt(p)
				if got != want || gok != wok {
					t.Errorf("%s at %v (%v), the tree says %v (%v)", p, got, gok, want, wok)
				}
			}
		}
	})
}
