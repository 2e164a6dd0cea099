package tenancy

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

func TestHostsOverlap(t *testing.T) {
	t.Parallel()
	var h Hosts
	h.Claim("bank.example.com", "bank")
	h.Claim("*.shop.example.com", "shop")
	h.Claim("Api.Example.org.", "api")
	tests := []struct {
		host, owner, claim, other string
	}{
		{"bank.example.com", "bank", "", ""},
		{"bank.example.com", "evil", "bank.example.com", "bank"},
		{"BANK.example.com.", "evil", "bank.example.com", "bank"},
		{"*.example.com", "evil", "*.shop.example.com", "shop"}, // the first by host
		{"*.bank.example.com", "evil", "", ""},
		{"*.com", "evil", "*.shop.example.com", "shop"}, // the first by host
		{"eu.shop.example.com", "evil", "*.shop.example.com", "shop"},
		{"a.b.shop.example.com", "evil", "*.shop.example.com", "shop"},
		{"*.eu.shop.example.com", "evil", "*.shop.example.com", "shop"},
		{"shop.example.com", "evil", "", ""}, // a wildcard claims what is under it, not its domain
		{"eu.shop.example.com", "shop", "", ""},
		{"api.example.org", "evil", "api.example.org", "api"},
		{"bank.example.com.evil.io", "evil", "", ""},
	}
	for _, tt := range tests {
		claim, other := h.Overlap(tt.host, tt.owner)
		if claim != tt.claim || other != tt.other {
			t.Errorf("Overlap(%q, %q) = %q, %q; want %q, %q", tt.host, tt.owner, claim, other, tt.claim, tt.other)
		}
	}
	for _, tt := range []struct {
		host, owner string
		own         bool
	}{
		{"bank.example.com", "bank", true},
		{"eu.shop.example.com", "shop", true},
		{"*.eu.shop.example.com", "shop", true},
		{"shop.example.com", "shop", false},
		{"bank.example.com", "shop", false},
		{"other.example.com", "bank", false},
	} {
		if own, _ := h.Owns(tt.host, tt.owner); own != tt.own {
			t.Errorf("Owns(%q, %q) = %v, want %v", tt.host, tt.owner, own, tt.own)
		}
	}
}

func TestChartRepositoryProblem(t *testing.T) {
	t.Parallel()
	allowed := []string{"https://charts.example.com", "oci://registry.example.com/charts/"}
	tests := []struct {
		url        string
		restricted bool
		want       string // a part of the problem; "" for none
	}{
		{"https://charts.bitnami.com/bitnami", false, ""},
		{"oci://registry-1.docker.io/bitnamicharts", false, ""},
		{"http://charts.example.com", false, "plain http://"},
		{"HTTP://charts.example.com", false, "plain http://"},
		{"http://127.0.0.1:8080", false, ""},
		{"http://localhost/charts", false, ""},
		{"http://[::1]:80", false, ""},
		{"http://127.0.0.1.evil.io", false, "plain http://"},
		{"http://127.0.0.1@evil.io", false, "plain http://"},
		{"git@github.com:bitnami/charts", false, "must be an https:// or oci:// URL"},
		{"https://charts.example.com", true, ""},
		{"https://charts.example.com/stable", true, ""},
		{"https://CHARTS.example.com/stable", true, ""},
		{"https://charts.example.com.evil.io/stable", true, "not under any"},
		{"https://charts.example.com@evil.io/stable", true, "not under any"},
		{"oci://registry.example.com/charts/pg", true, ""},
		{"oci://registry.example.com/Charts/pg", true, "not under any"},
		{"oci://registry.example.com/chartsx", true, "not under any"},
		{"http://127.0.0.1:8080", true, "not under any"},
	}
	for _, tt := range tests {
		got := ChartRepositoryProblem(tt.url, allowed, tt.restricted)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("ChartRepositoryProblem(%q, restricted %v) = %q, want %q", tt.url, tt.restricted, got, tt.want)
		}
	}
	if got := ChartRepositoryProblem("https://x.example.com", nil, true); !strings.Contains(got, "allows no chart repository") {
		t.Errorf("an empty allow list: %q", got)
	}
	for p, want := range map[string]string{"https://charts.example.com": "", "oci://r.example.com/x": "", "http://charts.example.com": "must start with", "https://": "needs a host", "https://u@h": "needs a host"} {
		if got := PrefixProblem(p); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("PrefixProblem(%q) = %q, want %q", p, got, want)
		}
	}
}

func obj(t *testing.T, s string) Object {
	t.Helper()
	var o Object
	if err := yaml.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestCheckPatched(t *testing.T) {
	t.Parallel()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-files, namespace: shop}\ndata: {a: b}\n"
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {template: {spec: {containers: [{name: web, image: nginx}]}}}\n"
	ing := "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: shop}\nspec: {rules: [{host: shop.example.com}]}\n"
	var h Hosts
	h.Claim("shop.example.com", "shop")
	h.Claim("bank.example.com", "bank")
	tenant := Tenant{App: layout.AppRef{Project: "shop", Name: "web"}, Hosts: func(x string) (bool, string) { return h.Owns(x, "shop") }}
	tests := []struct {
		name          string
		before, after []string
		level         string
		want          []string
	}{
		{"unchanged", []string{cm, dep, ing}, []string{cm, dep, ing}, "", nil},
		{"kind", []string{cm}, []string{strings.Replace(cm, "kind: ConfigMap", "kind: Secret", 1)}, "", []string{"Secret/web-files kind: the patches turn ConfigMap shop/web-files into a Secret; a patch may not change an object's kind"}},
		{"name", []string{cm}, []string{strings.Replace(cm, "name: web-files", "name: other", 1)}, "", []string{"ConfigMap/other metadata.name: the patches rename ConfigMap shop/web-files to other"}},
		{"namespace", []string{cm}, []string{strings.Replace(cm, "namespace: shop", "namespace: bank", 1)}, "", []string{`ConfigMap/web-files metadata.namespace: the patches move ConfigMap shop/web-files to namespace "bank"`}},
		{"removed", []string{cm, dep}, []string{dep}, "", []string{"ConfigMap/web-files: the patches remove ConfigMap shop/web-files"}},
		{"host", []string{ing}, []string{strings.Replace(ing, "shop.example.com", "bank.example.com", 1)}, "", []string{`Ingress/web spec.rules[0].host: host "bank.example.com" belongs to bank`}},
		{"hostNetwork at baseline", []string{dep}, []string{strings.Replace(dep, "spec: {containers", "spec: {hostNetwork: true, containers", 1)}, "", []string{"Deployment/web spec.template.spec: the patches give its pods what Pod Security level baseline\x00host namespaces (hostNetwork=true)"}},
		{"hostNetwork where the project is privileged", []string{dep}, []string{strings.Replace(dep, "spec: {containers", "spec: {hostNetwork: true, containers", 1)}, "privileged", nil},
		{"a pod that already broke the level", []string{strings.Replace(dep, "spec: {containers", "spec: {hostNetwork: true, containers", 1)}, []string{strings.Replace(dep, "spec: {containers", "spec: {hostNetwork: true, containers", 1)}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after []Object
			for _, s := range tt.before {
				before = append(before, obj(t, s))
			}
			for _, s := range tt.after {
				after = append(after, obj(t, s))
			}
			tn := tenant
			tn.PodSecurity = tt.level
			got := CheckPatched(before, after, tn)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d: %v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				for _, part := range strings.Split(w, "\x00") {
					if !strings.Contains(Text(got[i]), part) {
						t.Errorf("problem %d = %q, want it to hold %q", i, Text(got[i]), part)
					}
				}
			}
		})
	}
}

func TestForbiddenKind(t *testing.T) {
	t.Parallel()
	for _, k := range [][2]string{{"", "Namespace"}, {"rbac.authorization.k8s.io", "Role"}, {"rbac.authorization.k8s.io", "ClusterRoleBinding"},
		{"", "PersistentVolume"}, {"kustomize.toolkit.fluxcd.io", "Kustomization"}, {"helm.toolkit.fluxcd.io", "HelmRelease"},
		{"source.toolkit.fluxcd.io", "GitRepository"}, {"cert-manager.io", "ClusterIssuer"}, {"apiextensions.k8s.io", "CustomResourceDefinition"}} {
		if ForbiddenKind(k[0], k[1]) == "" {
			t.Errorf("%s/%s is allowed", k[0], k[1])
		}
	}
	for _, k := range [][2]string{{"", "ConfigMap"}, {"apps", "Deployment"}, {"networking.k8s.io", "Ingress"}, {"", "ServiceAccount"}} {
		if m := ForbiddenKind(k[0], k[1]); m != "" {
			t.Errorf("%s/%s is refused: %s", k[0], k[1], m)
		}
	}
}

// The 23 copy operations of the attack are refused from their text: the
// bound passes 1 MiB at the ninth, whatever they copy.
func TestBudgetRefusesCopyBomb(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/attacks/copy-bomb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ops any
	if err := yaml.Unmarshal(b, &ops); err != nil {
		t.Fatal(err)
	}
	op, msg := NewBudget(2048).Add(len(b), ops)
	if op != 9 || !strings.Contains(msg, "each copy can double it") {
		t.Errorf("Add = %d, %q; want operation 9 refused", op, msg)
	}
	// An ordinary patch passes, and the bound grows by what it adds.
	budget := NewBudget(2048)
	if op, msg := budget.Add(60, []any{map[string]any{"op": "add", "path": "/spec/x", "value": "abc"}}); msg != "" {
		t.Errorf("an add refused: %d %s", op, msg)
	}
	if got := budget.Bound(); got != 2048+5+7+8 {
		t.Errorf("bound %d", got)
	}
	many := make([]any, MaxOperations+1)
	for i := range many {
		many[i] = map[string]any{"op": "remove", "path": "/a"}
	}
	if op, msg := NewBudget(10).Add(100, many); op != MaxOperations+1 || !strings.Contains(msg, "at most 256") {
		t.Errorf("too many operations: %d %q", op, msg)
	}
	if _, msg := NewBudget(10).Add(MaxPatchBytes+1, map[string]any{}); !strings.Contains(msg, "a patch may be at most") {
		t.Errorf("a long patch: %q", msg)
	}
}

func TestTouches(t *testing.T) {
	t.Parallel()
	ops := []any{map[string]any{"op": "replace", "path": "/spec/rules/0/host"}}
	smp := map[string]any{"spec": map[string]any{"rules": []any{}}}
	for _, tt := range []struct {
		patch any
		field string
		want  bool
	}{
		{ops, "spec.rules[0].host", true}, {ops, "spec.rules[0]", true}, {ops, "spec.tls[0]", false}, {ops, "kind", false},
		{smp, "spec.rules[0].host", true}, {smp, "spec.tls", false}, {smp, "", true},
	} {
		if got := Touches(tt.patch, tt.field); got != tt.want {
			t.Errorf("Touches(%v, %q) = %v", tt.patch, tt.field, got)
		}
	}
	if got := Pointer("metadata.annotations.a/b~c"); got != "/metadata/annotations/a~1b~0c" {
		t.Errorf("Pointer = %q", got)
	}
}

// BenchmarkBudget is what bounding a patch costs before kustomize runs it:
// here the 23 copy operations of the attack, refused at the ninth.
func BenchmarkBudget(b *testing.B) {
	text, err := os.ReadFile("testdata/attacks/copy-bomb.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var ops any
	if err := yaml.Unmarshal(text, &ops); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, msg := NewBudget(2048).Add(len(text), ops); msg == "" {
			b.Fatal("accepted")
		}
	}
}
