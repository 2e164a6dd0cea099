package verify

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// builtJSON returns the objects as sorted JSON lines with sorted keys.
func builtJSON(objs []*object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		var v any
		if err := json.Unmarshal(yamlx.AppendJSON(nil, o.root), &v); err != nil {
			panic(err)
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// The direct assembly of plain paths gives what kustomize gives, for every
// path of the examples and for namespaced and cluster-scoped objects under
// a target namespace; a Namespace under a target namespace (which kustomize
// renames) is left to kustomize.
func TestAssembleMatchesKustomize(t *testing.T) {
	t.Parallel()
	_, files := exampleFleet(t)
	// Two hand-written Kustomizations under a target namespace: one of
	// namespaced and cluster-scoped objects, one holding a Namespace.
	ks := func(name string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\n" +
			"spec:\n  interval: 10m0s\n  path: ./fleet/apps/prod-eu/_extra/" + name + "\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  targetNamespace: elsewhere\n"
	}
	files["clusters/prod-eu/extra.yaml"] = []byte(ks("extra-plain") + "---\n" + ks("extra-ns"))
	files["apps/prod-eu/_extra/extra-plain/kustomization.yaml"] = []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- extra.yaml\n")
	files["apps/prod-eu/_extra/extra-plain/extra.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: other\ndata:\n  a: \"1\"\n" +
		"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules: []\n" +
		"---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n")
	files["apps/prod-eu/_extra/extra-ns/kustomization.yaml"] = []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- namespace-shop.yaml\n")
	files["apps/prod-eu/_extra/extra-ns/namespace-shop.yaml"] = []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n")
	root := golden.TempFiles(t, files)
	repo, _ := exampleFleet(t)
	r, err := newRun(Options{FleetDir: root, FleetPath: "fleet", Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	if r.t, err = readTree(t.Context(), root, 2); err != nil {
		t.Fatal(err)
	}
	r.gitRoot = gitRootOf(r.t.root, r.prefix)
	kss, _ := r.discover(t.Context())
	if len(kss) != 12 {
		t.Fatalf("found %d Flux Kustomizations, want 12", len(kss))
	}
	for _, ks := range kss {
		rel, ok := r.fleetRel(ks.path)
		if !ok {
			t.Fatalf("%s: path %s outside the fleet", ks.key(), ks.path)
		}
		fast, ok := r.assemble(ks, rel, nil)
		if want := ks.name != "extra-ns"; ok != want {
			t.Errorf("%s: assembled directly = %v, want %v", ks.key(), ok, want)
		}
		if !ok {
			continue
		}
		full, remote, err := r.kustomize(ks, rel, r.gitRoot, nil)
		if err != nil || remote != "" {
			t.Fatalf("%s: kustomize: %v %s", ks.key(), err, remote)
		}
		if diff := gocmp.Diff(builtJSON(full), builtJSON(fast)); diff != "" {
			t.Errorf("%s: assembled objects differ from kustomize's (-kustomize +assembled):\n%s", ks.key(), diff)
		}
		if ks.name == "extra-plain" && !strings.Contains(strings.Join(builtJSON(fast), "\n"), `"name":"c","namespace":"elsewhere"`) {
			t.Errorf("target namespace not applied: %s", builtJSON(fast))
		}
	}
}

// A project's artifact of Flux files (no kustomization.yaml) is assembled
// directly with the objects kustomize builds from it, reading only the
// *.yaml files directly in its folder.
func TestAssembleProjectMatchesKustomize(t *testing.T) {
	t.Parallel()
	repo, files := artifactsFleet(t)
	// Neither is in the artifact: a sub-folder's file and a file of
	// another kind.
	files["apps/prod-eu/shop/_flux/old/orders.yaml"] = files["apps/prod-eu/shop/_flux/orders.yaml"]
	files["apps/prod-eu/shop/_flux/notes.yml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n")
	root := golden.TempFiles(t, files)
	r, err := newRun(Options{FleetDir: root, FleetPath: "fleet", Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	if r.t, err = readTree(t.Context(), root, 2); err != nil {
		t.Fatal(err)
	}
	r.gitRoot = gitRootOf(r.t.root, r.prefix)
	kss, repos := r.discover(t.Context())
	r.checkArtifacts(t.Context(), repos)
	r.resolveSources(kss, repos)
	projects := 0
	for _, ks := range kss {
		if ks.oci == nil || !ks.oci.project {
			continue
		}
		projects++
		only := map[string]bool{}
		for _, f := range r.artifactFiles(ks.oci) {
			only[ks.oci.dir+"/"+f.Name] = true
		}
		fast, ok := r.assemble(ks, ks.oci.dir, only)
		if !ok {
			t.Errorf("%s: not assembled directly", ks.key())
			continue
		}
		full, remote, err := r.kustomize(ks, ks.oci.dir, r.t.root+"/"+ks.oci.dir, only)
		if err != nil || remote != "" {
			t.Fatalf("%s: kustomize: %v %s", ks.key(), err, remote)
		}
		if diff := gocmp.Diff(builtJSON(full), builtJSON(fast)); diff != "" {
			t.Errorf("%s: assembled objects differ from kustomize's (-kustomize +assembled):\n%s", ks.key(), diff)
		}
		for _, o := range fast {
			if o.name == "notes" || strings.Contains(o.file, "/old/") {
				t.Errorf("%s: built %s from %s, which the artifact does not hold", ks.key(), o.label(), o.file)
			}
		}
		if len(fast) == 0 {
			t.Errorf("%s: built no objects", ks.key())
		}
	}
	if projects != 2 {
		t.Errorf("%d project Kustomizations, want 2", projects)
	}
}

// Paths that need kustomize are built by it, with the Flux Kustomization's
// own settings, and their output is what gets validated.
func TestKustomizePaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		mutate     func(t testing.TB, f map[string][]byte)
		want       []string
		kustomized int
	}{
		{
			name: "patch from the Flux Kustomization",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrders, "  targetNamespace: shop\n", "  targetNamespace: shop\n  patches:\n  - patch: |\n      - op: add\n        path: /spec/template/spec/containers/0/imagePullPolicyy\n        value: Always\n    target:\n      kind: Deployment\n      name: orders-api\n")
			},
			want:       []string{"fleet/" + ordersAPI + ":35: Deployment/orders-api: spec.template.spec.containers[0].imagePullPolicyy: unknown field"},
			kustomized: 1,
		},
		{
			name: "no kustomization.yaml: generated as Flux does",
			mutate: func(t testing.TB, f map[string][]byte) {
				delete(f, "apps/prod-eu/shop/orders/worker/kustomization.yaml")
				f["apps/prod-eu/shop/orders/worker/notes.yaml"] = []byte("just: a note\n")
			},
			want:       []string{},
			kustomized: 1,
		},
		{
			name: "base outside the path",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["apps/prod-eu/shop/orders/worker/kustomization.yaml"] = []byte("resources:\n- ../../../../../base\n")
				f["base/kustomization.yaml"] = []byte("resources:\n- cm.yaml\n")
				f["base/cm.yaml"] = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  k: 1\n")
			},
			want: []string{
				"fleet/base/cm.yaml:6: ConfigMap/base: data.k: must be a string, not a number",
			},
			kustomized: 1,
		},
		{
			name: "remote base",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["apps/prod-eu/shop/orders/worker/kustomization.yaml"] = []byte("resources:\n- https://github.com/example/repo//deploy?ref=v1\n")
			},
			want: []string{"fleet/" + shopOrders + ":56: warning: Kustomization/shop-orders-worker: spec.path: not built: it refers to the remote base https://github.com/example/repo//deploy?ref=v1, and verify does not fetch remote bases"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, files := exampleFleet(t)
			tt.mutate(t, files)
			rep := verifyFleet(t, files, Options{})
			if diff := gocmp.Diff(tt.want, lines(rep, CheckAPI, CheckBuild, CheckKind)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if rep.Stats.Kustomized != tt.kustomized {
				t.Errorf("%d paths built by kustomize, want %d", rep.Stats.Kustomized, tt.kustomized)
			}
		})
	}
}

var _ = cmp.Compare[int]
