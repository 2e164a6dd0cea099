package verify

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// attackPatch is a hostile patch of the tenancy package's test data, as a
// kustomization.yaml's patches list holds it (one item, its patch quoted),
// on objects of kind.
func attackPatch(t testing.TB, name, kind string) string {
	t.Helper()
	b, err := os.ReadFile("../tenancy/testdata/attacks/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return "- patch: " + strconv.Quote(string(b)) + "\n  target:\n    kind: " + kind + "\n"
}

const (
	ordersIngress = "apps/prod-eu/shop/orders/api/ingress-orders-api.yaml"
	reportsIng    = "apps/prod-eu/shop/reports/web/ingress-reports-web.yaml"
	reportsRepo   = "apps/prod-eu/shop/reports/cache/helmrepository-reports-cache.yaml"
)

// The attacks a team with write access to the fleet can commit by hand,
// each refused by verify at the line that makes it.
func TestTenancyAttacksOnTheFleet(t *testing.T) {
	t.Parallel()
	tenancyChecks := []Check{CheckTenancy, CheckDuplicate, CheckChartRepository}
	tests := []struct {
		name     string
		mutate   func(t testing.TB, f map[string][]byte)
		platform func(p *spec.Platform)
		want     []string
	}{
		{name: "a patch turns the ConfigMap into a ClusterRoleBinding of cluster-admin", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, attackPatch(t, "clusterrolebinding", "ConfigMap"))
		}, want: []string{"fleet/" + storeKust + ":11: ClusterRoleBinding/store-api-files: kind: ClusterRoleBinding/store-api-files: the patches turn ConfigMap shop/store-api-files into a ClusterRoleBinding (rbac.authorization.k8s.io); a patch may not change an object's kind"}},
		{name: "a patch makes a Flux Kustomization into another project", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, attackPatch(t, "kustomization", "ConfigMap"))
		}, want: []string{"fleet/" + storeKust + ":11: Kustomization/store-api-files: kind: Kustomization/store-api-files: the patches turn ConfigMap shop/store-api-files into a Kustomization (kustomize.toolkit.fluxcd.io)", "Flux object"}},
		{name: "a patch makes a privileged Namespace named like the project", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, attackPatch(t, "namespace", "ConfigMap"))
		}, want: []string{
			"fleet/" + storeKust + ":11: Namespace/shop: kind: Namespace/shop: the patches turn ConfigMap shop/store-api-files into a Namespace named shop",
			"fleet/clusters/prod-eu/projects/shop.yaml:2: Namespace/shop: Namespace shop is also defined at fleet/clusters/prod-eu/apps/shop-store.yaml",
		}},
		{name: "a patch moves the Ingress to another app's host", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, ordersKust, "- service-orders-api.yaml\n", "- service-orders-api.yaml\npatches:\n"+
				strings.ReplaceAll(attackPatch(t, "ingress-host", "Ingress"), "bank.example.com", "reports.example.com"))
		}, want: []string{
			"fleet/" + ordersKust + `:10: Ingress/orders-api: spec.rules[0].host: host "reports.example.com" is not one app orders claims`,
			"fleet/" + ordersKust + `:10: Ingress/orders-api: spec.rules[0].host: host "reports.example.com" is claimed by app prod-eu/shop/reports (fleet/` + reportsIng + `:20)`,
		}},
		{name: "a wildcard Ingress host over another app's", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, reportsIng, "host: reports.example.com", `host: "*.example.com"`)
		}, want: []string{"fleet/" + reportsIng + `:20: Ingress/reports-web: spec.rules[0].host: the wildcard host "*.example.com" covers "api.example.com" of app prod-eu/`}},
		{name: "23 copy operations", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, attackPatch(t, "copy-bomb", "ConfigMap"))
		}, want: []string{"fleet/" + storeKust + ":11: operation 10 could grow an object to 1.9 MiB (each copy can double it)", "kustomize would run out of memory applying it; not built"}},
		{name: "23 copy operations in a file of patchesJson6902", mutate: func(t testing.TB, f map[string][]byte) {
			b, err := os.ReadFile("../tenancy/testdata/attacks/copy-bomb.yaml")
			if err != nil {
				t.Fatal(err)
			}
			f[storeDir+"api/bomb.yaml"] = b
			edit(t, f, storeKust, "- serviceaccount-store-api.yaml\n", "- serviceaccount-store-api.yaml\npatchesJson6902:\n- target: {version: v1, kind: ConfigMap, name: store-api-files}\n  path: bomb.yaml\n")
		}, want: []string{
			"fleet/" + storeKust + ":12: operation 10 could grow an object to",
			"fleet/" + storeKust + ":10: patchesJson6902 in a component folder's kustomization.yaml: it may hold only resources (the folder's own files) and patches",
		}},
		{name: "host access through a patch", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, attackPatch(t, "privileged", "Deployment"))
		}, want: []string{"fleet/" + storeKust + ":11: Deployment/store-api: spec.template.spec: the patches give its pods what the project's Pod Security level restricted forbids: host namespaces (hostPID=true), privileged", `restricted volume type "hostPath"`}},
		{name: "a ClusterRoleBinding file in a component folder", mutate: func(t testing.TB, f map[string][]byte) {
			f[storeDir+"api/clusterrolebinding-x.yaml"] = []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\n" +
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: default, namespace: shop}]\n")
			edit(t, f, storeKust, "- serviceaccount-store-api.yaml\n", "- serviceaccount-store-api.yaml\n- clusterrolebinding-x.yaml\n")
		}, want: []string{"fleet/" + storeDir + "api/clusterrolebinding-x.yaml:2: ClusterRoleBinding/x: kind: ClusterRoleBinding in project shop's component folder: a ClusterRoleBinding is an RBAC object"}},
		{name: "a component applied into another project's namespace", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, shopOrders, "  targetNamespace: shop\n", "  targetNamespace: my-project\n")
		}, want: []string{`Deployment/orders-api: metadata.namespace: is in namespace "my-project"; an object of project shop's folder must be in the project's namespace "shop"`}},
		{name: "a second Namespace of the project's name, in a namespace", mutate: func(t testing.TB, f map[string][]byte) {
			f["apps/prod-eu/_extra/namespace.yaml"] = []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  namespace: elsewhere\n  labels: {pod-security.kubernetes.io/enforce: privileged}\n")
		}, want: []string{"fleet/clusters/prod-eu/projects/shop.yaml:2: Namespace/shop: Namespace shop is also defined at fleet/apps/prod-eu/_extra/namespace.yaml:1"}},
		{name: "a chart over plain http", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, reportsRepo, "url: oci://registry-1.docker.io/bitnamicharts", "url: http://charts.example.com/bitnami")
		}, want: []string{"fleet/" + reportsRepo + `:18: HelmRepository/reports-cache: spec.url: "http://charts.example.com/bitnami" is a plain http:// repository`}},
		{name: "a chart outside policy.chart_repositories", platform: func(p *spec.Platform) {
			pol := *p.Policy
			pol.ChartRepositories = []string{"oci://registry.example.com/charts"}
			p.Policy = &pol
		}, want: []string{"fleet/" + reportsRepo + `:18: HelmRepository/reports-cache: spec.url: "oci://registry-1.docker.io/bitnamicharts" is not under any of platform.yaml's policy.chart_repositories (oci://registry.example.com/charts)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := storeFleet(t)
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			var opts Options
			if tt.platform != nil {
				repo, _ := exampleFleet(t)
				plat := repo.Platform
				tt.platform(&plat)
				opts.Platform = &plat
			}
			got := lines(verifyFleet(t, files, opts), tenancyChecks...)
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

// The fleet render writes, with ordinary patches, has no tenancy finding.
func TestTenancyCleanFleet(t *testing.T) {
	t.Parallel()
	files := storeFleet(t)
	storePatch(t, files, "- patch: \"- op: add\\n  path: /spec/template/spec/hostAliases\\n  value: [{ip: 10.0.0.1, hostnames: [legacy]}]\\n\"\n  target:\n    kind: Deployment\n")
	if got := lines(verifyFleet(t, files, Options{}), CheckTenancy, CheckDuplicate, CheckChartRepository); len(got) != 0 {
		t.Errorf("findings on a clean fleet:\n%s", strings.Join(got, "\n"))
	}
}

// tenantOf names the project and app of exactly the files
// layout.ComponentDirOf puts in a component's folder (fleet paths are
// clean: no empty segment).
func TestTenantOf(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		"apps/prod-eu/shop/web/api/deployment-web-api.yaml", "apps/prod-eu/shop/web/api/sub/x.yaml",
		"apps/prod-eu/shop/_flux/web.yaml", "apps/prod-eu/shop/web/api", "apps/prod-eu/shop/web/api/", "clusters/prod-eu/apps/shop-web.yaml",
		"apps/prod-eu/_extra/a/b/c.yaml", "apps/prod-eu/shop/x.yaml",
	} {
		app, ok := tenantOf(p)
		dir := layout.ComponentDirOf(p)
		if ok != (dir != "" && !strings.HasSuffix(p, "/")) {
			t.Errorf("tenantOf(%q) = %v; ComponentDirOf = %q", p, ok, dir)
		}
		if ok && (strings.Split(dir, "/")[2] != app.Project || strings.Split(dir, "/")[3] != app.Name) {
			t.Errorf("tenantOf(%q) = %s; ComponentDirOf = %q", p, app.Ref(), dir)
		}
	}
}
