package render_test

import (
	"context"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
)

// TestValidation: every repository is counted once, however often it is
// added, and errors are counted apart from warnings.
func TestValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	good, bad := t.TempDir(), t.TempDir()
	golden.WriteFiles(t, good, map[string]string{
		"platform.yaml":          "build: {pin: false}\n",
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: site, type: workload, workload_spec: {image: nginx:1.27, port: 80}}, {name: cache, type: workload, workload_spec: {image: redis:7}}]\n",
		"apps/shop/api/app.yaml": "name: api\ncomponents: [{name: srv, type: workload, workload_spec: {image: myorg/api:1, port: 80}}]\n",
	})
	golden.WriteFiles(t, bad, map[string]string{
		"platform.yaml":           "build: {pin: false}\n",
		"apps/shop/web/app.yaml":  "name: web\ncomponents: []\n",
		"apps/shop/Bad_/app.yaml": "name: Bad_\ncomponents: [{name: site, type: workload, workload_spec: {image: nginx:1.27}}]\n",
	})
	var v render.Validation
	for _, root := range []string{good, good} {
		if err := v.Add(ctx, root); err != nil {
			t.Fatal(err)
		}
	}
	if v.Apps != 2 || v.Components != 3 || v.Errors() != 0 {
		t.Errorf("the good repository, twice: %d apps, %d components, %d errors: %v", v.Apps, v.Components, v.Errors(), v.Problems)
	}
	if err := v.Add(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if v.Apps != 4 || v.Errors() < 2 || len(v.Problems) < v.Errors() {
		t.Errorf("with the bad one: %d apps, %d errors: %v", v.Apps, v.Errors(), v.Problems)
	}
}
