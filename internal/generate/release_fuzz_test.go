package generate_test

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
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

// FuzzParsePreviewRecord: a preview's record, read from the fleet (where
// anyone with write access may edit it), is parsed without a panic, and
// one it accepts names a preview and fleet files only.
func FuzzParsePreviewRecord(f *testing.F) {
	rec := &generate.PreviewRecord{PullRequest: 5, Environment: "pr-5", Head: "abc", Apps: []string{"shop/api"},
		Created: time.Unix(1800000000, 0), Updated: time.Unix(1800003600, 0), Files: []string{"previews/stage-eu/pr-5/x.yaml"}}
	seed, err := generate.PreviewRecordData(rec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("pull_request: 5\nenvironment: pr-5\nupdated: 2027-01-01T00:00:00Z\nfiles: [../../etc/passwd]\n"))
	f.Add([]byte("pull_request: -1\nenvironment: pr--1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := generate.ParsePreviewRecord(data)
		if err != nil {
			return
		}
		if r.PullRequest <= 0 || r.Environment != layout.PreviewEnvironment(r.PullRequest) || r.Updated.IsZero() {
			t.Fatalf("accepted %+v", r)
		}
		for _, p := range r.Files {
			if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") {
				t.Fatalf("accepted file %q", p)
			}
		}
	})
}
