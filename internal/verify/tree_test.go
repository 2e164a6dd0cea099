package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/golden"
)

// TestReadTreeFinishesAnInterruptedRender: the temporary files of a render
// killed while it wrote the folder are not read as part of the fleet.
func TestReadTreeFinishesAnInterruptedRender(t *testing.T) {
	t.Parallel()
	root := golden.TempFiles(t, map[string]string{
		"apps/a.yaml":                  "a: 1\n",
		"apps/.fleetwright-tmp-b.yaml": "b: 1\n",
		fleet.JournalName:              "fleetwright journal 1\nr \"apps/.fleetwright-tmp-b.yaml\" \"apps/b.yaml\"\n",
	})
	tr, err := readTree(t.Context(), root, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"apps/a.yaml"}, tr.paths); d != "" {
		t.Errorf("paths (-want +got):\n%s", d)
	}
}
