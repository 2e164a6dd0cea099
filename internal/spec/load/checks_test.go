package load_test

import (
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// A loader without checks reports what the schema refuses and nothing of
// what the checks would: two components of one name pass the schema.
func TestLoaderWithoutChecks(t *testing.T) {
	files := map[string][]byte{
		"apps/shop/web/app.yaml": []byte("name: web\ncomponents:\n  - name: api\n    type: workload\n    workload_spec: {image: nginx:1.27}\n  - name: api\n    type: workload\n    workload_spec: {image: nginx:1.27, colour: blue}\n"),
	}
	l, err := load.NewLoader(spectest.TestCatalog, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ps := l.LoadFiles(files)
	if len(ps) != 1 || !strings.Contains(ps[0].Error(), "colour") {
		t.Fatalf("want only the schema's problem with colour, got:\n%v", ps)
	}
	_, all := spectest.CatalogLoader(t, "").LoadFiles(files)
	if len(all) < 2 {
		t.Fatalf("the project's checks should find the repeated name too, got:\n%v", all)
	}
}
