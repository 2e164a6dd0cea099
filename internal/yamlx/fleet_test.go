package yamlx_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/synth"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// Every file render writes for the examples and the benchmark's apps is
// read by the fast reader, with the same result as yaml.v3: the speed the
// fast reader brings is real only if it reads what render writes.
func TestFastReadsRenderedFleet(t *testing.T) {
	t.Parallel()
	examples := spectest.Load(t, "../../examples")
	bench := spectest.LoadFiles(t, synth.Files(20))
	for _, repo := range []*load.Repo{examples, bench} {
		f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform})
		if err != nil {
			t.Fatal(err)
		}
		for p, data := range f.Map() {
			fast, ok := yamlx.Fast(data)
			if !ok {
				t.Errorf("%s: the fast reader refused a rendered file", p)
				continue
			}
			full, err := yamlx.Full(data)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if diff := cmp.Diff(yamlx.Dump(full), yamlx.Dump(fast)); diff != "" {
				t.Errorf("%s: readers differ (-yaml.v3 +fast):\n%s", p, diff)
			}
		}
	}
}
