package main

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

// TestRenderDefaultPlatformsSingleBase: without build.platforms, a base
// image of one platform (the usual private base) builds that platform,
// and the build log says which and why.
func TestRenderDefaultPlatformsSingleBase(t *testing.T) {
	t.Parallel()
	img := busyboxImage(t)
	reg := registrytest.New(t, registrytest.Options{})
	base := reg.Host() + "/base/private:v1"
	if err := crane.Push(img, base); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":            "registry: " + reg.Host() + "/fleet\n",
		"apps/shop/web/app.yaml":   "name: web\ncomponents: [{name: site, type: workload, workload_spec: {build_mode: dockerfile, port: 80}}]\n",
		"apps/shop/web/Dockerfile": "FROM " + base + "\nCOPY index.html /srv/\n",
		"apps/shop/web/index.html": "hello\n",
	})
	out := filepath.Join(t.TempDir(), "fleet")
	r := runCmd(t, map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}, "--out", out, root)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	other := "linux/arm64"
	if runtime.GOARCH == "arm64" {
		other = "linux/amd64"
	}
	want := "apps/shop/web/Dockerfile: building linux/" + runtime.GOARCH + " (of the default platforms linux/amd64, linux/arm64, the base images have only these; build.platforms is not set)"
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "no image for "+other) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
}
