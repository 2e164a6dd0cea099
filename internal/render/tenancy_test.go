package render_test

import (
	"os"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// attack reads a hostile patch of the tenancy package's test data, as a
// team would commit it.
func attack(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("../tenancy/testdata/attacks/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// indent indents every line of s by n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}

// shopSpec is the attacker's app: a web workload with a config file (its
// ConfigMap) and an Ingress, and the given patch on the objects of kind.
// The patch's item starts at line 11.
func shopSpec(kind, patch string) string {
	return `name: web
components:
  - name: web
    type: workload
    workload_spec:
      image: nginx:1.27
      port: 80
      files: [{path: /etc/web/config.yaml, content: "a: 1\n"}]
      ingress: {enabled: true, host: shop.example.com}
      patches:
        - target: {kind: ` + kind + `}
          patch: |
` + indent(patch, 12)
}

const bankSpec = `name: web
components:
  - name: web
    type: workload
    workload_spec: {image: nginx:1.27, port: 80, ingress: {enabled: true, host: bank.example.com}}
`

// validate writes an apps repository and validates it as render validate
// does.
func validate(t *testing.T, files map[string]string) load.Problems {
	t.Helper()
	root := t.TempDir()
	if _, ok := files["platform.yaml"]; !ok {
		files["platform.yaml"] = "build: {pin: false}\n"
	}
	golden.WriteFiles(t, root, files)
	var v render.Validation
	if err := v.Add(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	return v.Problems
}

// The attacks a team can commit in its own app.yaml, each refused by
// render validate at the patch's line (or the host's, or the chart's).
func TestValidateRefusesTenancyAttacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		file  string
		line  int
		want  []string
	}{
		{"ClusterRoleBinding from the ConfigMap", map[string]string{"apps/shop/web/app.yaml": shopSpec("ConfigMap", attack(t, "clusterrolebinding"))},
			"apps/shop/web/app.yaml", 11, []string{"components[0].workload_spec.patches[0]", "turn ConfigMap shop/web-web-files into a ClusterRoleBinding", "may not change an object's kind", "RBAC"}},
		{"Flux Kustomization into another project", map[string]string{"apps/shop/web/app.yaml": shopSpec("ConfigMap", attack(t, "kustomization")), "apps/bank/web/app.yaml": bankSpec},
			"apps/shop/web/app.yaml", 11, []string{"into a Kustomization (kustomize.toolkit.fluxcd.io)", "Flux object"}},
		{"a privileged Namespace named like the project", map[string]string{"apps/shop/web/app.yaml": shopSpec("ConfigMap", attack(t, "namespace"))},
			"apps/shop/web/app.yaml", 11, []string{"patches[0]", "into a Namespace named shop", "Pod Security labels"}},
		{"the Ingress moved to another app's host", map[string]string{"apps/shop/web/app.yaml": shopSpec("Ingress", attack(t, "ingress-host")), "apps/bank/web/app.yaml": bankSpec},
			"apps/shop/web/app.yaml", 11, []string{"spec.rules[0].host", `host "bank.example.com" belongs to `, "apps/bank/web/app.yaml;"}},
		{"host access through a patch", map[string]string{"apps/shop/web/app.yaml": shopSpec("Deployment", attack(t, "privileged"))},
			"apps/shop/web/app.yaml", 11, []string{"spec.template.spec", "host namespaces", "hostPath volumes", "privileged"}},
		{"23 copy operations", map[string]string{"apps/shop/web/app.yaml": shopSpec("ConfigMap", attack(t, "copy-bomb"))},
			"apps/shop/web/app.yaml", 12, []string{"patches[0].patch", "operation 10 could grow an object to", "out of memory"}},
		{"a wildcard host over another app's", map[string]string{"apps/bank/web/app.yaml": bankSpec,
			"apps/shop/web/app.yaml": "name: web\ncomponents:\n  - name: web\n    type: workload\n    workload_spec: {image: nginx:1.27, port: 80, ingress: {enabled: true, host: \"*.example.com\"}}\n"},
			"apps/shop/web/app.yaml", 5, []string{"ingress.host", `the wildcard host "*.example.com" claims every name under it, and host "bank.example.com" is claimed by `, "apps/bank/web/app.yaml (web)"}},
		{"a chart over plain http", map[string]string{"apps/shop/db/app.yaml": "name: db\ncomponents:\n  - name: pg\n    type: addon\n    addon_spec:\n      type: postgresql\n      chart: {repo: \"http://charts.example.com/bitnami\", name: postgresql, version: 13.4.4}\n"},
			"apps/shop/db/app.yaml", 7, []string{"chart.repo", "plain http://"}},
		{"a chart outside policy.chart_repositories", map[string]string{
			"platform.yaml":         "build: {pin: false}\npolicy:\n  chart_repositories: [\"https://charts.example.com\", \"oci://registry.example.com/charts\"]\n",
			"apps/shop/db/app.yaml": "name: db\ncomponents:\n  - name: pg\n    type: addon\n    addon_spec:\n      type: postgresql\n      chart: {repo: \"https://charts.example.com.evil.io/bitnami\", name: postgresql, version: 13.4.4}\n"},
			"apps/shop/db/app.yaml", 7, []string{"chart.repo", "is not under any of platform.yaml's policy.chart_repositories"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps := validate(t, tc.files)
			var hit *diag.Diagnostic
			for _, p := range ps {
				if strings.HasSuffix(p.File, tc.file) && p.Severity != diag.Warning {
					hit = p
					break
				}
			}
			if hit == nil {
				t.Fatalf("validate accepts it; problems: %v", ps)
			}
			got := hit.Error()
			t.Log(got)
			if hit.Line != tc.line {
				t.Errorf("refused at line %d, want %d: %s", hit.Line, tc.line, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problem lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// A patch that keeps to its component's fields passes: the check refuses
// attacks, not patches.
func TestValidateAcceptsOrdinaryPatches(t *testing.T) {
	t.Parallel()
	ps := validate(t, map[string]string{
		"apps/shop/web/app.yaml": shopSpec("Deployment", "- op: add\n  path: /spec/template/spec/hostAliases\n  value: [{ip: 10.0.0.1, hostnames: [legacy]}]\n"),
		"apps/shop/api/app.yaml": "name: api\ncomponents:\n  - name: api\n    type: workload\n    workload_spec:\n      image: nginx:1.27\n      port: 80\n" +
			"      ingress: {enabled: true, host: \"*.api.example.com\"}\n      patches:\n        - target: {kind: Ingress}\n          patch: |\n" +
			"            - {op: replace, path: /spec/rules/0/host, value: eu.api.example.com}\n",
	})
	if ps.HasErrors() {
		t.Fatalf("ordinary patches refused:\n%v", ps)
	}
}
