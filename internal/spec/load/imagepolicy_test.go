package load_test

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spectest"
)

// Validation applies verify's forbid_latest policy to workload images,
// with platform.yaml's severity, at the image's line.
func TestForbidLatest(t *testing.T) {
	t.Parallel()
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name, policy, image string
		want                []string
	}{
		{name: "no tag", image: "myorg/web", want: []string{"apps/shop/web/app.yaml:6:14: components[0].workload_spec.image: image myorg/web uses the mutable latest tag; pin a version (policy forbid_latest)"}},
		{name: "latest", image: "myorg/web:latest", want: []string{"apps/shop/web/app.yaml:6:14: components[0].workload_spec.image: image myorg/web:latest uses the mutable latest tag; pin a version (policy forbid_latest)"}},
		{name: "registry port, no tag", image: "registry.example.com:5000/web", want: []string{"apps/shop/web/app.yaml:6:14: components[0].workload_spec.image: image registry.example.com:5000/web uses the mutable latest tag; pin a version (policy forbid_latest)"}},
		{name: "warning", policy: "policy: {forbid_latest: warning}\n", image: "myorg/web:latest", want: []string{"apps/shop/web/app.yaml:6:14: warning: components[0].workload_spec.image: image myorg/web:latest uses the mutable latest tag; pin a version (policy forbid_latest)"}},
		{name: "error", policy: "policy: {forbid_latest: error}\n", image: "myorg/web", want: []string{"apps/shop/web/app.yaml:6:14: components[0].workload_spec.image: image myorg/web uses the mutable latest tag; pin a version (policy forbid_latest)"}},
		{name: "off", policy: "policy: {forbid_latest: off}\n", image: "myorg/web:latest"},
		{name: "a version", image: "myorg/web:1.2.0"},
		{name: "pinned latest", image: "myorg/web:latest" + digest},
		{name: "pinned, no tag", image: "myorg/web" + digest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{
				"platform.yaml":          {Data: []byte("apps_domain: apps.example.com\n" + tt.policy)},
				"apps/shop/web/app.yaml": {Data: []byte("name: web\ncomponents:\n  - name: web\n    type: workload\n    workload_spec:\n      image: " + tt.image + "\n      port: 8080\n")},
			}
			_, ps := spectest.NotPolicy(newLoader(t, "").Load(fsys))
			var got []string
			for _, p := range ps {
				got = append(got, p.Error())
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

// Images that render builds are exempt: they get content tags.
func TestForbidLatestExemptsBuilds(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"dockerfile", "buildpack"} {
		fsys := fstest.MapFS{
			"platform.yaml":          {Data: []byte("registry: registry.example.com/fleet\npolicy: {forbid_latest: error}\n")},
			"apps/shop/web/app.yaml": {Data: []byte("name: web\ncomponents:\n  - name: web\n    type: workload\n    workload_spec:\n      build_mode: " + mode + "\n      port: 8080\n")},
		}
		if _, ps := spectest.NotPolicy(newLoader(t, "").Load(fsys)); len(ps) > 0 {
			t.Errorf("build_mode %s: problems %v", mode, ps)
		}
	}
}
