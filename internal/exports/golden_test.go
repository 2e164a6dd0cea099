package exports

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// goldenCase is one variant's complete output: every export, why the
// others are unavailable, and the env vars each export wires to.
type goldenCase struct {
	Name        string              `json:"name"`
	Exports     map[string]Export   `json:"exports"`
	Unavailable map[string]string   `json:"unavailable,omitempty"`
	Env         map[string][]EnvVar `json:"env"`
	Checksum    string              `json:"checksum"`
}

func goldenOf(t *testing.T, name string, in AddonInput) goldenCase {
	t.Helper()
	exp, err := ForAddon(in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := goldenCase{Name: name, Exports: exp, Env: map[string][]EnvVar{}, Checksum: Checksum(exp)}
	keys, _ := Keys(in.Type)
	for _, k := range keys {
		if _, ok := exp[k]; ok {
			continue
		}
		_, err := Lookup(in, k)
		if c.Unavailable == nil {
			c.Unavailable = map[string]string{}
		}
		c.Unavailable[k] = err.Error()
	}
	for _, k := range slices.Sorted(maps.Keys(exp)) {
		c.Env[k] = Wire("APP_"+strings.ToUpper(k), exp[k])
	}
	return c
}

// TestGolden compares the full output of every variant with
// testdata/catalog.golden.json; run with -update to rewrite it after a
// deliberate change, and review the diff.
func TestGolden(t *testing.T) {
	t.Parallel()
	var cases []goldenCase
	for _, v := range variants() {
		cases = append(cases, goldenOf(t, v.name, v.in))
	}
	cases = append(cases, goldenOf(t, "generic/declared", generic(
		Declared{Key: "host", Value: "search.shop.svc.cluster.local", Description: "search host"},
		Declared{Key: "password", Secret: &SecretKeyRef{Name: "search-auth", Key: "password"}, Description: "search password"},
		Declared{Key: "url", Value: "https://elastic:$(password)@$(host):9200", Description: "search URL"},
	)))
	got, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden.File(t, filepath.Join("testdata", "catalog.golden.json"), got)
}
