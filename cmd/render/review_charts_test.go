package main

import (
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	helmregistry "helm.sh/helm/v4/pkg/registry"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
)

// TestReviewRendersAddonCharts: render review of an addon's chart bump,
// its chart in an OCI registry on loopback, shows the chart's objects and
// its new CRD, and keeps the archives in the folder --chart-cache names.
func TestReviewRendersAddonCharts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	c, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptWriter(io.Discard),
		helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.1.0", "2.0.0"} {
		if _, err := c.Push(golden.PackChart(t, filepath.Join("..", "..", "internal", "review", "charts", "testdata", "charts", "webcache-"+v), "webcache"), host+"/charts/webcache:"+v); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	app := func(v string) map[string]string {
		return map[string]string{"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: cache, type: addon, addon_spec: {type: generic, chart: {repo: oci://" + host + "/charts, name: webcache, version: " + v + "}}}]\n"}
	}
	golden.WriteFiles(t, dir, app("1.1.0"))
	base := commitAll(t, dir, "cache")
	golden.WriteFiles(t, dir, app("2.0.0"))
	head := commitAll(t, dir, "cache 2")
	cache := t.TempDir()
	r := runCmd(t, nil, "review", "--base", base, "--head", head, "--post=false", "--chart-cache", cache, dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"Base `" + base[:7] + "` → head `" + head[:7] + "`.",
		"- HelmRelease `shop/web-cache`: `webcache 1.1.0` → `webcache 2.0.0`",
		"moves to another major version, `1.1.0` → `2.0.0`",
		"the chart adds CustomResourceDefinition `purges.webcache.example.com`",
		"| `shop/web-cache-webcache (cache)` | `registry.example.com/webcache:1.28.0` | `registry.example.com/webcache:2.0.0` |",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the comment lacks %q:\n%s", want, r.stdout)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "sha256-*.tgz")); len(m) != 2 {
		t.Errorf("the chart cache holds %v, want the two archives", m)
	}
}
