package charts_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/review/charts"
)

// TestCacheByDigest: an archive fetched once is read from the cache on the
// next review, by the digest the index gives; one changed on disk is
// fetched again.
func TestCacheByDigest(t *testing.T) {
	t.Parallel()
	repo := newChartRepo(t, "1.0.0")
	dir := t.TempDir()
	rel := review.Release{Name: "web-cache", Namespace: "shop", Chart: "webcache", Version: "1.0.0",
		Source: review.ChartSource{Kind: "HelmRepository", URL: repo.URL}}
	for i := range 2 {
		out, err := charts.New(charts.Options{CacheDir: dir}).Render(context.Background(), rel)
		if err != nil {
			t.Fatal(err)
		}
		if out.Version != "1.0.0" || len(out.Objects) != 2 { // the Deployment and the Secret; not the test Pod
			t.Errorf("review %d: %s %s, %d objects", i, out.Chart, out.Version, len(out.Objects))
		}
	}
	if n := repo.requests("/webcache-1.0.0.tgz"); n != 1 {
		t.Errorf("the archive was fetched %d times, want once", n)
	}
	if n := repo.requests("/index.yaml"); n != 2 {
		t.Errorf("the index was fetched %d times, want once a review", n)
	}
}

// TestHostileRepository: what a chart repository serves is checked.
func TestHostileRepository(t *testing.T) {
	t.Parallel()
	good := golden.PackChart(t, filepath.Join("testdata", "charts", "webcache-1.0.0"), "webcache")
	evil := golden.PackChart(t, filepath.Join("testdata", "charts", "webcache-1.1.0"), "webcache")
	sum := sha256.Sum256(good)
	// The index names one archive, the server (or anyone on the way)
	// serves another.
	swapped := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/index.yaml" {
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  webcache:\n  - version: 1.0.0\n    digest: %s\n    urls: [webcache-1.0.0.tgz]\n", hex.EncodeToString(sum[:]))
			return
		}
		w.Write(evil)
	}))
	defer swapped.Close()
	rel := review.Release{Name: "web-cache", Namespace: "shop", Chart: "webcache", Version: "1.0.0",
		Source: review.ChartSource{Kind: "HelmRepository", URL: swapped.URL}}
	dir := t.TempDir()
	if out, err := charts.New(charts.Options{CacheDir: dir}).Render(context.Background(), rel); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("a swapped archive rendered: %v, %v", out, err)
	}
	// The swapped archive is not in the cache under the good digest either.
	repo := newChartRepo(t, "1.0.0")
	rel.Source.URL = repo.URL
	out, err := charts.New(charts.Options{CacheDir: dir}).Render(context.Background(), rel)
	if err != nil || !strings.Contains(fmt.Sprint(out.Objects), "webcache:1.27.0") {
		t.Errorf("after a swap: %v, %v", out, err)
	}
}

// TestSecretsNeverShown: a chart that renders its values into a Secret,
// and a HelmRelease that reads values from a Secret the fleet holds (a
// file edited by hand): the comment shows neither value.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	repo := newChartRepo(t, "1.0.0")
	const fromValues = "hunter2-in-values"
	const inSecret = "registry.attacker.test/leak-the-secret"
	base := release{source: "HelmRepository", url: repo.URL, version: "1.0.0"}.files()
	head := release{source: "HelmRepository", url: repo.URL, version: "1.0.0", values: "    password: " + fromValues + "\n",
		extra: "  valuesFrom:\n  - kind: Secret\n    name: web-cache-values\n    valuesKey: values.yaml\n"}.files()
	head[releaseDir+"secret-web-cache-values.yaml"] = []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-cache-values\n  namespace: shop\nstringData:\n  values.yaml: |\n    image: " + inSecret + "\n")
	c := review.BuildContext(context.Background(), review.Input{Base: base, Head: head, Charts: charts.New(charts.Options{})})
	rendered := base64.StdEncoding.EncodeToString([]byte(fromValues))
	for _, s := range []string{rendered, rendered[:len(rendered)-4]} {
		if strings.Contains(c.Body, s) || strings.Contains(c.FullDiff, s) {
			t.Errorf("the rendered Secret's value %q is shown", s)
		}
	}
	// The Secret's file itself is the fleet's, shown as the fleet has it;
	// the chart never renders with its values: its Deployment, whose image
	// they would change, does not change.
	if strings.Contains(c.FullDiff, "chart-web-cache/deployment-") || strings.Contains(c.Body, "`"+inSecret+"`") {
		t.Errorf("the chart was rendered with a Secret's values:\n%s", c.Body)
	}
	for _, want := range []string{"password: (hidden; changed)", "values from Secret `shop/web-cache-values` not rendered"} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, c.Body)
		}
	}
}

// TestRenderedNamesStayInTheirFolder: a chart whose objects' names are
// paths cannot make the review read them as fleet files elsewhere (a
// kustomization.yaml, another app's file): each is a file of its
// release's folder.
func TestRenderedNamesStayInTheirFolder(t *testing.T) {
	t.Parallel()
	names := []string{"../../../../../../clusters/default/apps/shop-web.yaml", "../kustomization", "..", "x/../../y"}
	c := review.BuildContext(context.Background(), review.Input{
		Base:   release{source: "HelmRepository", url: "http://unused.test", version: "1.0.0"}.files(),
		Head:   release{source: "HelmRepository", url: "http://unused.test", version: "1.0.1"}.files(),
		Charts: namedCharts(names),
	})
	n := 0
	for _, l := range strings.Split(c.FullDiff, "\n") {
		p, ok := strings.CutPrefix(l, "+++ ")
		if !ok || !strings.Contains(p, "chart-web-cache") {
			continue
		}
		n++
		if !strings.HasPrefix(p, releaseDir+"chart-web-cache/") || strings.Count(p, "/") != strings.Count(releaseDir, "/")+1 || strings.Contains(p, "/../") {
			t.Errorf("a rendered object's file is %q", p)
		}
	}
	if n != len(names) {
		t.Errorf("%d rendered files, want %d:\n%s", n, len(names), c.FullDiff)
	}
}

// namedCharts renders ConfigMaps of the given names, each with the
// version in its data.
type namedCharts []string

func (n namedCharts) Render(_ context.Context, rel review.Release) (*review.Rendered, error) {
	out := &review.Rendered{Chart: rel.Chart, Version: rel.Version}
	for _, name := range n {
		out.Objects = append(out.Objects, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"version": rel.Version}})
	}
	return out, nil
}
