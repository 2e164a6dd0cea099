package generate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
)

// TestFluxObjectsMoveToTheirProjectNamespace renders over fleets that the
// layout before per-project namespaces wrote (testdata/move/<case>: the
// apps' Flux objects in flux-system, run as the cluster's service
// account), as a platform team upgrading does, render after render:
//
//  1. the first render keeps every app's Kustomizations where they are and
//     as they were, each with spec.prune: false, so that deleting them
//     deletes nothing they applied; it says to render again;
//  2. the second renders the fleet as a new one: every Flux object in the
//     project's namespace, run as the project's account.
func TestFluxObjectsMoveToTheirProjectNamespace(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"artifacts", "seed", "worker-url"} {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			before := golden.ReadBytes(t, filepath.Join("testdata/move", c))
			repo := loadRepo(t, nil, filepath.Join("testdata/specs", c))
			renderOver := func(prev map[string][]byte) (*generate.Fleet, map[string][]byte) {
				t.Helper()
				f, err := generate.Render(repo, generate.Options{SpecRevision: revision, Previous: generate.FileIn(prev)})
				if err != nil {
					t.Fatal(err)
				}
				return f, f.Map()
			}

			f1, step1 := renderOver(before)
			var apps []string
			for _, a := range repo.Apps {
				apps = append(apps, a.Key())
			}
			if diff := cmp.Diff(apps, f1.Preparing); diff != "" {
				t.Errorf("step one: Preparing (-want +got):\n%s", diff)
			}
			for p, old := range before {
				if !strings.Contains(string(old), "\nkind: Kustomization\n") || strings.Contains(p, "/projects/") {
					continue
				}
				want := strings.ReplaceAll(string(old), "\n  prune: true\n", "\n  prune: false\n")
				if diff := cmp.Diff(want, string(step1[p])); diff != "" {
					t.Errorf("step one: %s is not the file as it was with prune: false (-want +got):\n%s", p, diff)
				}
			}

			f2, step2 := renderOver(step1)
			if len(f2.Preparing) != 0 {
				t.Errorf("step two: Preparing %v", f2.Preparing)
			}
			golden.Tree(t, filepath.Join("testdata/fleets", c), step2)

			// Once moved, it stays.
			f3, step3 := renderOver(step2)
			if len(f3.Preparing) != 0 {
				t.Errorf("step three: Preparing %v", f3.Preparing)
			}
			if diff := cmp.Diff(step2, step3); diff != "" {
				t.Errorf("step three differs from step two (-two +three):\n%s", diff)
			}
		})
	}
}
