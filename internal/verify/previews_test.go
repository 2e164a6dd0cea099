package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

const (
	previewDir    = "previews/prod-eu/pr-5/"
	previewOrders = previewDir + "apps/prod-eu/shop-pr5/orders/api/deployment-orders-api.yaml"
	previewIng    = previewDir + "apps/prod-eu/shop-pr5/orders/api/ingress-orders-api.yaml"
	previewKS     = previewDir + "clusters/prod-eu/apps/shop-pr5-orders.yaml"
	previewFlux   = "clusters/prod-eu/previews/pr-5.yaml"
)

// previewFleet is the examples' fleet with pull request 5's preview of
// shop/orders (and what it references), as render preview writes it,
// and the platform with its previews.
func previewFleet(t testing.TB) (map[string][]byte, *spec.Platform) {
	t.Helper()
	repo, files := exampleFleet(t)
	plat := repo.Platform
	plat.Previews = &spec.Previews{Cluster: "prod-eu", AppsDomain: "preview.example.com", TTL: "72h", Max: 5}
	withPreviews := *repo
	withPreviews.Platform = plat
	p, ps := spectest.Loader(t).PreviewOf(&withPreviews, 5, []string{"shop/orders"})
	if ps.HasErrors() || len(p.Apps) == 0 {
		t.Fatalf("preview: %v %v", p.Apps, ps)
	}
	f, _, err := render.RenderPreview(render.PreviewInput{Preview: p, Head: strings.Repeat("a", 40), Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range f.Files {
		files[x.Path] = x.Data
	}
	return files, &plat
}

var previewChecks = []Check{CheckPreview, CheckTenancy, CheckBuild, CheckDuplicate}

// A preview as render preview writes it is built and checked like the
// rest, and has no finding of its own.
func TestPreviewCleanFleet(t *testing.T) {
	t.Parallel()
	files, plat := previewFleet(t)
	rep := verifyFleet(t, files, Options{Platform: plat})
	if got := lines(rep, previewChecks...); len(got) != 0 {
		t.Errorf("findings on a clean preview:\n%s", strings.Join(got, "\n"))
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.File, "previews/") && f.Severity == SeverityError {
			t.Errorf("error on the preview: %s", f.String())
		}
	}
	if rep.Stats.Kustomizations < 3 {
		t.Errorf("%d Kustomizations: the preview's are not discovered", rep.Stats.Kustomizations)
	}
}

// The attacks on a preview that someone with write access to the fleet
// could commit by hand, each refused by verify.
func TestPreviewAttacksOnTheFleet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mutate   func(t testing.TB, f map[string][]byte)
		platform func(p *spec.Platform)
		want     []string
	}{
		{name: "a preview's workload in the project's own namespace", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, previewOrders, "namespace: shop-pr5", "namespace: shop")
		}, want: []string{"fleet/" + previewOrders + ": Deployment orders-api: namespace shop is not one of pull request #5's preview (<project>-pr5)"}},
		{name: "a preview's workload in another project's preview", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, previewOrders, "namespace: shop-pr5", "namespace: bank-pr5")
		}, want: []string{"fleet/" + previewOrders + ": Deployment orders-api: namespace bank-pr5 is not one of pull request #5's preview"}},
		{name: "a preview's Kustomization applies an environment's folder", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, previewKS, "path: ./fleet/previews/prod-eu/pr-5/apps/prod-eu/shop-pr5/orders/api", "path: ./fleet/apps/prod-eu/shop/orders/api")
		}, want: []string{"fleet/" + previewKS + ": Kustomization shop-pr5-orders-api: path ./fleet/apps/prod-eu/shop/orders/api is not in the preview's folder ./fleet/previews/prod-eu/pr-5"}},
		{name: "the preview's Flux file applies the cluster's root", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, previewFlux, "path: ./fleet/previews/prod-eu/pr-5/clusters/prod-eu", "path: ./fleet/clusters/prod-eu")
		}, want: []string{"fleet/" + previewFlux + ": Kustomization preview-pr-5: path ./fleet/clusters/prod-eu is not in the preview's folder"}},
		{name: "a production host in a preview", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, previewIng, "host: orders-shop-pr5.preview.example.com", "host: orders.example.com")
		}, want: []string{`fleet/` + previewIng + `: Ingress orders-api: host "orders.example.com" is not under previews.apps_domain preview.example.com`}},
		{name: "a ClusterRoleBinding in a preview's component folder", mutate: func(t testing.TB, f map[string][]byte) {
			f[previewDir+"apps/prod-eu/shop-pr5/orders/api/clusterrolebinding-x.yaml"] = []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\n" +
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: default, namespace: shop-pr5}]\n")
			edit(t, f, previewDir+"apps/prod-eu/shop-pr5/orders/api/kustomization.yaml", "- service-orders-api.yaml\n", "- service-orders-api.yaml\n- clusterrolebinding-x.yaml\n")
		}, want: []string{
			"ClusterRoleBinding/x: kind: ClusterRoleBinding in project shop-pr5's component folder: a ClusterRoleBinding is an RBAC object",
			"ClusterRoleBinding x: names no namespace",
		}},
		{name: "a file in the previews' folder that is no preview's", mutate: func(t testing.TB, f map[string][]byte) {
			f["previews/prod-eu/all.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: shop}\n")
		}, want: []string{"fleet/previews/prod-eu/all.yaml: not in a preview's folder"}},
		{name: "a preview's file in an environment's path", mutate: func(t testing.TB, f map[string][]byte) {
			f["clusters/prod-eu/previews/everything.yaml"] = []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: x, namespace: flux-system}\nspec: {path: ./fleet, prune: true, interval: 1m, sourceRef: {kind: GitRepository, name: flux-system}}\n")
		}, want: []string{"fleet/clusters/prod-eu/previews/everything.yaml: not a preview's Flux file"}},
		{name: "previews in a fleet whose platform declares none", platform: func(p *spec.Platform) { p.Previews = nil },
			want: []string{"fleet/" + previewFlux + ": a preview's file, and platform.yaml declares no previews"}},
		{name: "a preview without its record", mutate: func(t testing.TB, f map[string][]byte) {
			delete(f, previewDir+"preview.yaml")
		}, want: []string{"fleet/previews/prod-eu/pr-5: preview pr-5 has no record"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files, plat := previewFleet(t)
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			if tt.platform != nil {
				tt.platform(plat)
			}
			got := lines(verifyFleet(t, files, Options{Platform: plat}), previewChecks...)
			for _, w := range tt.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no finding holds %q; findings:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
}
