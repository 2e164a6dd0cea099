package charts_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/review/charts"
)

const releaseDir = "apps/default/shop/web/cache/"

// release is a HelmRelease of the fleet and its Flux source, as render
// writes an addon (a HelmRepository of type default or oci), or with its
// chart from an OCIRepository (chartRef).
type release struct {
	source  string // HelmRepository, HelmRepository-oci, OCIRepository
	url     string
	version string // the chart's version (HelmRepository), the tag (OCIRepository)
	values  string // spec.values, indented by 4
	extra   string // more of spec, indented by 2
}

func (r release) files() map[string][]byte {
	hr := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  labels:
    fleetwright.io/app: web
    fleetwright.io/component: cache
    fleetwright.io/project: shop
  name: web-cache
  namespace: shop
spec:
`
	var src string
	switch r.source {
	case "OCIRepository":
		hr += "  chartRef:\n    kind: OCIRepository\n    name: web-cache\n"
		src = fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: web-cache\n  namespace: shop\nspec:\n  interval: 1h0m0s\n  ref:\n    tag: %q\n  url: %s\n", r.version, r.url)
	default:
		hr += fmt.Sprintf("  chart:\n    spec:\n      chart: webcache\n      sourceRef:\n        kind: HelmRepository\n        name: web-cache\n      version: %q\n", r.version)
		typ := ""
		if r.source == "HelmRepository-oci" {
			typ = "  type: oci\n"
		}
		src = fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: web-cache\n  namespace: shop\nspec:\n  interval: 1h0m0s\n%s  url: %s\n", typ, r.url)
	}
	hr += "  interval: 10m0s\n  releaseName: web-cache\n" + r.extra
	if r.values != "" {
		hr += "  values:\n" + r.values
	}
	kind := strings.ToLower(strings.TrimSuffix(r.source, "-oci"))
	return map[string][]byte{
		releaseDir + "helmrelease-web-cache.yaml": []byte(hr),
		releaseDir + kind + "-web-cache.yaml":     []byte(src),
		releaseDir + "kustomization.yaml":         []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- helmrelease-web-cache.yaml\n- " + kind + "-web-cache.yaml\n"),
		"clusters/default/apps/shop-web.yaml":     []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: web-cache\n  namespace: shop\nspec:\n  path: ./" + strings.TrimSuffix(releaseDir, "/") + "\n"),
	}
}

// TestReviewRendersCharts builds the review of changes to a HelmRelease
// whose chart is served by a chart repository and an OCI registry on
// loopback, and compares it with its golden comment.
func TestReviewRendersCharts(t *testing.T) {
	t.Parallel()
	repo := newChartRepo(t, "1.0.0", "1.1.0", "2.0.0")
	host := ociRegistry(t, "1.1.0", "2.0.0", "2.1.0")
	dead := httptest.NewServer(nil)
	dead.Close() // a repository that cannot be reached: offline
	const values = "    metrics:\n      enabled: false\n"
	tests := []struct {
		name       string
		base, head release
		danger     []string // each a substring of one danger line
		absent     []string // never in the comment
	}{
		{
			name: "chart-bump",
			base: release{source: "HelmRepository", url: repo.URL, version: "1.0.0"},
			head: release{source: "HelmRepository", url: repo.URL, version: "1.1.0"},
		},
		{
			name:   "values-change",
			base:   release{source: "HelmRepository", url: repo.URL, version: "1.0.0", values: values + "    password: old-secret-value\n"},
			head:   release{source: "HelmRepository", url: repo.URL, version: "1.0.0", values: "    replicas: 3\n    metrics:\n      enabled: true\n    password: new-secret-value\n"},
			absent: []string{"b2xkLXNlY3JldC12YWx1ZQ", "bmV3LXNlY3JldC12YWx1ZQ", "Y2hhbmdlLW1l"},
		},
		{
			name:   "major-bump",
			base:   release{source: "HelmRepository-oci", url: "oci://" + host + "/charts", version: "1.1.0"},
			head:   release{source: "HelmRepository-oci", url: "oci://" + host + "/charts", version: "2.0.0"},
			danger: []string{"moves to another major version", "the chart adds CustomResourceDefinition `purges.webcache.example.com`"},
		},
		{
			name:   "crd-change",
			base:   release{source: "OCIRepository", url: "oci://" + host + "/charts/webcache", version: "2.0.0"},
			head:   release{source: "OCIRepository", url: "oci://" + host + "/charts/webcache", version: "2.1.0"},
			danger: []string{"the chart changes CustomResourceDefinition `purges.webcache.example.com` (spec.versions)"},
		},
		{
			name:   "crd-removed",
			base:   release{source: "HelmRepository-oci", url: "oci://" + host + "/charts", version: "2.0.0"},
			head:   release{source: "HelmRepository-oci", url: "oci://" + host + "/charts", version: "1.1.0"},
			danger: []string{"moves to another major version", "the chart no longer has CustomResourceDefinition `purges.webcache.example.com`"},
		},
		{
			name: "offline",
			base: release{source: "HelmRepository", url: dead.URL, version: "1.0.0"},
			head: release{source: "HelmRepository", url: dead.URL, version: "2.0.0", values: values,
				extra: "  valuesFrom:\n  - kind: Secret\n    name: web-cache-values\n"},
			danger: []string{"moves to another major version"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := charts.New(charts.Options{CacheDir: t.TempDir()})
			c := review.BuildContext(context.Background(), review.Input{
				Base: tt.base.files(), Head: tt.head.files(),
				BaseCommit: "0123456789abcdef0123456789abcdef01234567", HeadCommit: "89abcdef0123456789abcdef0123456789abcdef",
				Charts: r, FullDiffHint: "the full diff is in the job summary",
			})
			if len(c.Danger) != len(tt.danger) {
				t.Errorf("danger = %q, want %d lines", c.Danger, len(tt.danger))
			}
			for _, want := range tt.danger {
				if !strings.Contains(strings.Join(c.Danger, "\n"), want) {
					t.Errorf("no danger line says %q: %q", want, c.Danger)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(c.Body, s) || strings.Contains(c.FullDiff, s) {
					t.Errorf("the comment or the full diff shows %q", s)
				}
			}
			body := strings.NewReplacer(repo.URL, "http://charts.test", host, "registry.test", strings.TrimPrefix(dead.URL, "http://"), "offline.test").Replace(c.Body)
			golden.File(t, filepath.Join("testdata", "review-"+tt.name+".md"), body)
		})
	}
}
