package generate_test

import (
	"path"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/generate"
)

// FuzzParseRelease: a release file comes from the fleet repository, where
// anyone with write access may edit it. Parsing never panics, and a
// release it accepts names an environment and lists only clean paths
// inside the fleet, none of them a release file.
func FuzzParseRelease(f *testing.F) {
	f.Add([]byte("environment: production\nspec_revision: abc\nimages: {api: myorg/api@sha256:00}\nfiles:\n- apps/prod-eu/shop/api/api/deployment-api-api.yaml\n- clusters/prod-eu/apps/shop-api.yaml\n"))
	f.Add([]byte("environment: staging\nfiles: []\n"))
	f.Add([]byte("environment: production\nfiles: [../../etc/passwd, /abs, apps/x/../../y, apps/c/p/a/release.yaml]\n"))
	f.Add([]byte("environment: [a]\nfiles: {a: b}\nunknown: 1\n"))
	f.Add([]byte("&a [*a, *a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rel, err := generate.ParseRelease(data)
		if err != nil {
			return
		}
		if rel.Environment == "" {
			t.Fatal("accepted a release without an environment")
		}
		for _, p := range rel.Files {
			if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || path.Base(p) == "release.yaml" {
				t.Fatalf("accepted the file %q", p)
			}
		}
	})
}
