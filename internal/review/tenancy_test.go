package review_test

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
)

const (
	apiIngress  = storeDir + "api/ingress-store-api.yaml"
	bankDir     = "apps/prod-eu/bank/web/site/"
	bankIngress = bankDir + "ingress-web-site.yaml"
)

func ingress(name, namespace, app, host string) string {
	return "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  labels:\n    fleetwright.io/app: " + app + "\n  name: " + name + "\n  namespace: " + namespace +
		"\nspec:\n  rules:\n  - host: " + host + "\n    http:\n      paths:\n      - backend:\n          service:\n            name: " + name +
		"\n            port:\n              name: http\n        path: /\n        pathType: Prefix\n"
}

// hostFleet is the store fleet with an Ingress for the api
// (store.example.com) and another app, bank's web, whose Ingress serves
// bank.example.com.
func hostFleet(t *testing.T) map[string][]byte {
	t.Helper()
	f := change(t, storeFleet(t), apiKust, "- deployment-store-api.yaml\n", "- deployment-store-api.yaml\n- ingress-store-api.yaml\n")
	f[apiIngress] = []byte(ingress("store-api", "shop", "store", "store.example.com"))
	f[bankIngress] = []byte(ingress("web-site", "bank", "web", "bank.example.com"))
	f[bankDir+"kustomization.yaml"] = []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ingress-web-site.yaml\n")
	return f
}

// patched adds a JSON6902 patch to a component's kustomization.yaml, as
// a team that may only commit under its apps folder would: ops is the
// patch's YAML, target its target's kind.
func patched(t *testing.T, f map[string][]byte, kust, kind, ops string) map[string][]byte {
	t.Helper()
	out := maps.Clone(f)
	out[kust] = append([]byte(strings.TrimSuffix(string(f[kust]), "\n")+"\n"), "patches:\n- patch: |\n"+indent(ops, "    ")+"  target:\n    kind: "+kind+"\n"...)
	return out
}

func indent(s, by string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(by + l)
		}
	}
	return b.String()
}

// The component's ConfigMap turned into another object by a patch: the
// first attack of a team on the fleet.
const (
	toClusterAdmin = `- op: replace
  path: /kind
  value: ClusterRoleBinding
- op: replace
  path: /apiVersion
  value: rbac.authorization.k8s.io/v1
- op: remove
  path: /data
- op: add
  path: /roleRef
  value: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
- op: add
  path: /subjects
  value: [{kind: ServiceAccount, name: store-api, namespace: shop}]
`
	toPrivilegedNamespace = `- op: replace
  path: /kind
  value: Namespace
- op: remove
  path: /data
- op: add
  path: /metadata/labels/pod-security.kubernetes.io~1enforce
  value: privileged
`
	toFluxKustomization = `- op: replace
  path: /kind
  value: Kustomization
- op: replace
  path: /apiVersion
  value: kustomize.toolkit.fluxcd.io/v1
- op: remove
  path: /data
- op: add
  path: /spec
  value: {interval: 1m, path: ./, prune: true, targetNamespace: bank, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}
`
)

// TestTenancyDangers: what a change does beyond its project is a danger
// line that names the object and what it does: cluster-scoped and RBAC
// objects, kinds new to the fleet, Flux objects in a component's folder
// that reach past it, and Ingress hosts added, removed, moved or taken
// from another app. Each change is written as an attacker would write it:
// a patch in the component's kustomization.yaml, or a fleet file edited
// by hand.
func TestTenancyDangers(t *testing.T) {
	t.Parallel()
	const (
		newCRB   = "kind `ClusterRoleBinding` (`rbac.authorization.k8s.io`) is new to the fleet (no object of the base has it): `shop/store-api-files`"
		storeIng = "Ingress `shop/store-api` of app `prod-eu/shop/store`"
		bankIng  = "Ingress `bank/web-site` of app `prod-eu/bank/web`"
		lost     = storeIng + " no longer serves host `store.example.com`: its clients lose it"
	)
	hostile := func(host string) func(t *testing.T, f map[string][]byte) map[string][]byte {
		return func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, apiIngress, "host: store.example.com", "host: "+host)
		}
	}
	add := func(p, text string) func(t *testing.T, f map[string][]byte) map[string][]byte {
		return func(t *testing.T, f map[string][]byte) map[string][]byte {
			f = change(t, f, apiKust, "- deployment-store-api.yaml\n", "- deployment-store-api.yaml\n- "+p+"\n")
			f[storeDir+"api/"+p] = []byte(text)
			return f
		}
	}
	tests := []struct {
		name string
		head func(t *testing.T, f map[string][]byte) map[string][]byte
		want []string
	}{
		{"a patch turns the ConfigMap into a ClusterRoleBinding to cluster-admin", func(t *testing.T, f map[string][]byte) map[string][]byte {
			return patched(t, f, apiKust, "ConfigMap", toClusterAdmin)
		}, []string{
			"ClusterRoleBinding `store-api-files` is added: it grants ClusterRole `cluster-admin` to ServiceAccount `shop/store-api` in every namespace of the cluster (every right on everything)",
			newCRB,
		}},
		{"a patch turns the ConfigMap into a privileged Namespace", func(t *testing.T, f map[string][]byte) map[string][]byte {
			return patched(t, f, apiKust, "ConfigMap", toPrivilegedNamespace)
		}, []string{
			"cluster-scoped Namespace `store-api-files` (its namespace `shop` is ignored) is added: it acts on the whole cluster, outside every project's namespace; " +
				"its pod security: `pod-security.kubernetes.io/enforce=privileged`",
			"kind `Namespace` is new to the fleet (no object of the base has it): `shop/store-api-files`",
		}},
		{"a patch turns the ConfigMap into a Flux Kustomization of another project", func(t *testing.T, f map[string][]byte) map[string][]byte {
			return patched(t, f, apiKust, "ConfigMap", toFluxKustomization)
		}, []string{
			"Flux Kustomization `shop/store-api-files` in component folder `apps/prod-eu/shop/store/api` is added and reaches beyond its project: " +
				"a Flux Kustomization applied by a component applies whatever its source holds; spec.targetNamespace is `bank`; spec.sourceRef.namespace is `flux-system`",
			"kind `Kustomization` (`kustomize.toolkit.fluxcd.io`) is new to the fleet (no object of the base has it): `shop/store-api-files`",
		}},
		{"a patch moves the Ingress host to another app's", func(t *testing.T, f map[string][]byte) map[string][]byte {
			return patched(t, f, apiKust, "Ingress", "- op: replace\n  path: /spec/rules/0/host\n  value: bank.example.com\n")
		}, []string{
			storeIng + " now serves host `bank.example.com`, which another app's route claims (" + bankIng + " serves `bank.example.com`): " +
				"the ingress controller may send that app's requests to this one, a host taken over",
			lost,
		}},
		{"a wildcard host over another app's", hostile(`"*.example.com"`), []string{
			storeIng + " now serves host `*.example.com`, which another app's route claims (" + bankIng + " serves `bank.example.com`): " +
				"the ingress controller may send that app's requests to this one, a host taken over",
			lost,
		}},
		{"a host taken in the same change as its app gives it up", func(t *testing.T, f map[string][]byte) map[string][]byte {
			f = hostile("bank.example.com")(t, f)
			return change(t, f, bankIngress, "host: bank.example.com", "host: bank2.example.com")
		}, []string{
			bankIng + " serves a new host `bank2.example.com`",
			"host `bank.example.com` moves from " + bankIng + " to " + storeIng + ": its requests go to another app",
			lost,
		}},
		{"a host of its own", hostile("shop.example.com"), []string{storeIng + " serves a new host `shop.example.com`", lost}},
		{"a RoleBinding", add("rolebinding.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: store-admin\n  namespace: shop\n"+
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}\nsubjects:\n- {kind: ServiceAccount, name: store-api, namespace: shop}\n- {kind: Group, name: devs}\n"), []string{
			"RoleBinding `shop/store-admin` is added: it grants ClusterRole `admin` to ServiceAccount `shop/store-api`, Group `devs` in namespace `shop`",
			"kind `RoleBinding` (`rbac.authorization.k8s.io`) is new to the fleet (no object of the base has it): `shop/store-admin`",
		}},
		{"a Role", add("role.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: shop\n"+
			"rules:\n- {apiGroups: [''], resources: [secrets], verbs: [get, list]}\n- {apiGroups: [apps], resources: [deployments], resourceNames: [store-api], verbs: [patch]}\n"), []string{
			"Role `shop/reader` is added: it allows `get`, `list` on `secrets`; `patch` on `deployments` named `store-api` in namespace `shop` to whoever is bound to it",
			"kind `Role` (`rbac.authorization.k8s.io`) is new to the fleet (no object of the base has it): `shop/reader`",
		}},
		{"a kind nobody knows", add("widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: shop\n"), []string{
			"Widget `shop/w` is added: fleetwright does not know whether kind `Widget` (`example.com`) is cluster-scoped, so review it as if it were (it may act beyond the project's namespace)",
			"kind `Widget` (`example.com`) is new to the fleet (no object of the base has it): `shop/w`",
		}},
		{"a kind the rest of the fleet has", add("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: shop\n"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := hostFleet(t)
			c := review.Build(review.Input{Base: base, Head: tt.head(t, base)})
			if diff := cmp.Diff(tt.want, c.Danger); diff != "" {
				t.Errorf("danger (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChartDangers: a chart from a repository the base fleet does not
// use, and a chart whose major version changes, are dangers; a minor
// version is not.
func TestChartDangers(t *testing.T) {
	t.Parallel()
	_, base := renderFiles(t, seedFiles(t))
	const (
		hr   = "apps/default/my-project/my-api/postgres/helmrelease-my-api-postgres.yaml"
		repo = "apps/default/my-project/my-api/postgres/helmrepository-my-api-postgres.yaml"
	)
	version := func(v string) map[string][]byte { return with(base, hr, `version: "13.4.4"`, "version: "+v) }
	tests := []struct {
		name string
		head map[string][]byte
		want []string
	}{
		{"a repository over plain http", with(base, repo, "url: https://charts.bitnami.com/bitnami", "url: http://charts.example.net/"), []string{
			"HelmRelease `my-project/my-api-postgres` installs chart `postgresql` from `http://charts.example.net/`, a chart repository new to the fleet (no HelmRelease of the base uses it): " +
				"what it serves is installed with the rights helm-controller gives the release; it is plain http, so anyone on the way can change the chart",
		}},
		{"a major version", version(`"14.0.0"`), []string{
			"HelmRelease `my-project/my-api-postgres`: chart `postgresql` moves to another major version, `13.4.4` → `14.0.0`: " +
				"a major version may change the chart's values, objects and stored data; read its upgrade notes",
		}},
		{"a minor version", version(`"13.5.0"`), nil},
		{"a range", version(`"13.x"`), []string{
			"HelmRelease `my-project/my-api-postgres`: chart version `13.4.4` → `13.x` is not an exact version on both sides, so the major version Helm installs may change: read the chart's upgrade notes",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := review.Build(review.Input{Base: base, Head: tt.head})
			if diff := cmp.Diff(tt.want, c.Danger); diff != "" {
				t.Errorf("danger (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTenancyComments keeps whole comments of the attacks as golden
// files: the danger lines come first, and the Changes section shows the
// patch and the object as Flux would apply it.
func TestTenancyComments(t *testing.T) {
	t.Parallel()
	base := hostFleet(t)
	tests := []struct {
		name string
		head map[string][]byte
	}{
		{"tenancy-cluster-admin", patched(t, base, apiKust, "ConfigMap", toClusterAdmin)},
		{"tenancy-host-hijack", patched(t, base, apiKust, "Ingress", "- op: replace\n  path: /spec/rules/0/host\n  value: bank.example.com\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := review.Build(review.Input{Base: base, Head: tt.head})
			golden.File(t, filepath.Join("testdata", tt.name+".md"), c.Body)
		})
	}
}
