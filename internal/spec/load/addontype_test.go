package load_test

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
)

// An unknown addon type names generic once, and the catalog's types.
func TestUnknownAddonTypeMessage(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"apps/shop/api/app.yaml": {Data: []byte("name: api\ncomponents:\n  - name: db\n    type: addon\n    addon_spec:\n      type: postgres\n      chart: {repo: https://charts.example.com, name: postgresql, version: 1.0.0}\n")}}
	tests := []struct {
		name    string
		catalog load.ExportCatalog
		want    string
	}{
		{"exports catalog", exports.Catalog{}, `apps/shop/api/app.yaml:6:13: components[0].addon_spec.type: unknown addon type "postgres"; use generic with declared exports, or one of: mariadb, mongodb, mysql, postgresql, rabbitmq, redis`},
		{"no catalog", nil, `apps/shop/api/app.yaml:6:13: components[0].addon_spec.type: unknown addon type "postgres"; use generic and declare its exports`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := validate.NewLoader(tt.catalog, "")
			if err != nil {
				t.Fatal(err)
			}
			_, ps := l.Load(fsys)
			var got []string
			for _, p := range ps {
				got = append(got, p.Error())
			}
			if d := cmp.Diff([]string{tt.want}, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}
