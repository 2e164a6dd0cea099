package generate_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// TestRemovingAProjectsLastApp renders, render after render, what a team
// that deletes its project's last app gets: first the project's file with
// its Namespace (marked), its account and RoleBinding only, so that Flux
// deletes the apps' Kustomizations while the account they prune as is
// still there; then nothing of the project. An app added back in between
// brings the project's file back whole.
func TestRemovingAProjectsLastApp(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"seed", "artifacts"} {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			specs := golden.ReadBytes(t, filepath.Join("testdata/specs", c))
			withApps := loadRepo(t, specs, "")
			none := loadRepo(t, map[string][]byte{"platform.yaml": specs["platform.yaml"]}, "")
			var emptied []string
			renderOver := func(repo *load.Repo, prev map[string][]byte) map[string][]byte {
				t.Helper()
				opts := generate.Options{SpecRevision: revision}
				opts.Over(prev)
				f, err := generate.Render(repo, opts)
				if err != nil {
					t.Fatal(err)
				}
				emptied = f.Emptied
				return f.Map()
			}
			a := withApps.Apps[0]
			projectFile := layout.ProjectFile(&withApps.Platform, a.Cluster, a.Project)

			live := renderOver(withApps, nil)
			if strings.Contains(string(live[projectFile]), layout.EmptiedLine) {
				t.Fatalf("%s of a project with apps is marked emptied:\n%s", projectFile, live[projectFile])
			}

			step1 := renderOver(none, live)
			if got := slices.Sorted(maps.Keys(step1)); !slices.Equal(got, []string{projectFile}) {
				t.Fatalf("first render without the project's apps wrote %q, want only %s", got, projectFile)
			}
			if want := []string{a.Cluster + "/" + a.Project}; !slices.Equal(emptied, want) {
				t.Errorf("Emptied = %q, want %q", emptied, want)
			}
			got := string(step1[projectFile])
			var kinds []string
			for doc := range strings.SplitSeq(got, "\n---\n") {
				for line := range strings.SplitSeq(doc, "\n") {
					if k, ok := strings.CutPrefix(line, "kind: "); ok {
						kinds = append(kinds, k)
					}
				}
			}
			if want := []string{"Namespace", "ServiceAccount", "RoleBinding"}; !slices.Equal(kinds, want) {
				t.Errorf("the emptied project's file holds %q, want %q:\n%s", kinds, want, got)
			}
			if !strings.Contains(got, "\n    "+layout.EmptiedLine+"\n") {
				t.Errorf("the emptied project's Namespace is not marked %q:\n%s", layout.EmptiedLine, got)
			}
			// The account and binding are those the apps' Kustomizations
			// ran as: the same objects, byte for byte.
			for _, doc := range strings.Split(string(live[projectFile]), "\n---\n") {
				if strings.Contains(doc, "\nkind: ServiceAccount\n") || strings.Contains(doc, "\nkind: RoleBinding\n") {
					if !strings.Contains(got, doc) {
						t.Errorf("the emptied project's file lost or changed:\n%s\nit holds:\n%s", doc, got)
					}
				}
			}

			// The next render, finding the mark, leaves the project out.
			if step2 := renderOver(none, step1); len(step2) != 0 {
				t.Errorf("second render without the project's apps wrote %q, want nothing", slices.Sorted(maps.Keys(step2)))
			}
			if len(emptied) != 0 {
				t.Errorf("second render: Emptied = %q", emptied)
			}

			// Back before the second render: the project is whole again.
			if diff := cmp.Diff(live, renderOver(withApps, step1)); diff != "" {
				t.Errorf("an app added back to the emptied project (-fleet before +got):\n%s", diff)
			}
		})
	}
}
