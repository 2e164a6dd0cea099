// Package spectest loads specs in tests as render does offline: with the
// loader of the built-in charts' exports (an empty catalog) and no template
// folder. Load and LoadFiles fail the test on any error problem; Loader is
// for the tests that look at the problems themselves.
package spectest

import (
	"os"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
)

// Loader returns the offline loader: the built-in charts' exports, no
// template folder.
func Loader(t testing.TB) *load.Loader {
	t.Helper()
	l, err := validate.NewLoader(exports.Catalog{}, "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Load loads the specs of the folder dir (platform.yaml and
// apps/…/app.yaml), failing t when they have an error.
func Load(t testing.TB, dir string) *load.Repo {
	t.Helper()
	repo, ps := Loader(t).Load(os.DirFS(dir))
	if ps.HasErrors() {
		t.Fatalf("invalid specs in %s:\n%v", dir, ps)
	}
	return repo
}

// LoadFiles loads the specs of files (contents by slash path), failing t
// when they have an error.
func LoadFiles(t testing.TB, files map[string][]byte) *load.Repo {
	t.Helper()
	repo, ps := Loader(t).LoadFiles(files)
	if ps.HasErrors() {
		t.Fatalf("invalid specs:\n%v", ps)
	}
	return repo
}

// NotPolicy drops the findings of the policy checks validate shares with
// verify (require_requests, require_probes, require_tls,
// production_replicas) from what a test of something else compares:
// TestInvalidSpecs/policy-checks and verify's
// TestPolicySameInValidateAndVerify check them.
func NotPolicy(repo *load.Repo, ps load.Problems) (*load.Repo, load.Problems) {
	var out load.Problems
	for _, p := range ps {
		switch {
		case p.Severity == diag.Warning && (strings.HasSuffix(p.Message, "(policy require_requests)") ||
			strings.HasSuffix(p.Message, "(policy require_probes)") || strings.HasSuffix(p.Message, "(policy require_tls)") ||
			strings.HasSuffix(p.Message, "(policy production_replicas)")):
		default:
			out = append(out, p)
		}
	}
	return repo, out
}

// Catalog is a small stand-in for the exports catalog: two addon types,
// postgresql and redis, with the real catalog's Service names.
type Catalog map[string][]string

// AddonExportKeys are the keys an addon of type t exports.
func (c Catalog) AddonExportKeys(t string) ([]string, map[string]bool, bool) {
	keys, ok := c[t]
	return keys, map[string]bool{"password": true, "connection_string": true}, ok
}

// AddonTypes are the catalog's addon types.
func (c Catalog) AddonTypes() []string { return []string{"postgresql", "redis"} }

// AddonServices are the real catalog's: the Service names of the charts.
func (c Catalog) AddonServices(typ, release, namespace string, values map[string]any) ([]string, string, bool) {
	return exports.Catalog{}.AddonServices(typ, release, namespace, values)
}

// TestCatalog is the stand-in catalog of the spec loader's tests.
var TestCatalog = Catalog{
	"postgresql": {"connection_string", "database", "host", "password", "port", "username"},
	"redis":      {"host", "password", "port", "url"},
}

// CatalogLoader returns a loader of the stand-in catalog (TestCatalog),
// which puts prefix before file names in its problems.
func CatalogLoader(t testing.TB, prefix string) *load.Loader {
	t.Helper()
	l, err := validate.NewLoader(TestCatalog, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
