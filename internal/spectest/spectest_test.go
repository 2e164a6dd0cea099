package spectest_test

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/spectest"
)

// recorder is a testing.TB that records a fatal failure instead of
// ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = format }

func TestLoad(t *testing.T) {
	t.Parallel()
	repo := spectest.Load(t, "../../examples")
	if len(repo.Apps) == 0 || repo.Platform.DefaultCluster != "prod-eu" {
		t.Errorf("the examples load as %d apps on default cluster %q", len(repo.Apps), repo.Platform.DefaultCluster)
	}
	repo = spectest.LoadFiles(t, map[string][]byte{"apps/shop/api/app.yaml": []byte("name: api\ncomponents:\n  - {name: web, type: workload, workload_spec: {image: nginx:1.27, port: 8080}}\n")})
	if len(repo.Apps) != 1 || repo.Apps[0].Project != "shop" || repo.Apps[0].Spec.Name != "api" {
		t.Errorf("one app loads as %d apps", len(repo.Apps))
	}
}

// TestLoadFailsOnInvalidSpecs: a spec with an error fails the test.
func TestLoadFailsOnInvalidSpecs(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	spectest.LoadFiles(r, map[string][]byte{"apps/shop/api/app.yaml": []byte("name: api\ncomponents: 3\n")})
	if r.failed == "" {
		t.Error("an invalid spec loads without failing the test")
	}
}
