package fleet

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

func TestReadObjects(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"apps/prod/shop/api/web/deployment.yaml": []byte("# header\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api-web\n  namespace: shop\n---\n" +
			"apiVersion: v1\nkind: Service\nmetadata:\n  name: api-web\n  namespace: shop\n"),
		"apps/prod/shop/_flux/api.yaml":                    []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: shop-api-web\n  namespace: flux-system\n"),
		"clusters/prod/apps/shop-api.yaml":                 []byte("- not\n- an object\n---\nkind: ConfigMap\nmetadata:\n  name: x\n"),
		"previews/prod/pr-7/apps/prod/shop/api/web/a.yaml": []byte("kind: ConfigMap\nmetadata:\n  name: a\n  namespace: shop-pr-7\n"),
		"apps/prod/shop/_project/ns.yaml":                  []byte("kind: Namespace\nmetadata:\n  name: shop\n"),
		"skipped.yaml":                                     []byte("kind: ConfigMap\nmetadata:\n  name: skipped\n"),
	}
	got := map[string]Object{}
	for o := range ReadObjects(files, func(p string) bool { return p == "skipped.yaml" }) {
		if _, dup := got[o.Key()]; dup {
			t.Errorf("%s read twice", o.Key())
		}
		got[o.Key()] = o
	}
	want := []string{"ConfigMap/shop-pr-7/a", "prod:ConfigMap//x", "prod:Deployment/shop/api-web", "prod:Kustomization/flux-system/shop-api-web", "prod:Namespace//shop", "prod:Service/shop/api-web"}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	for key, id := range map[string]ObjectID{
		"prod:Deployment/shop/api-web": {Cluster: "prod", Project: "shop", App: "api", Component: "web",
			APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "api-web"},
		"prod:Kustomization/flux-system/shop-api-web": {Cluster: "prod", Project: "shop", Folder: "_flux",
			APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization", Namespace: "flux-system", Name: "shop-api-web"},
		"prod:ConfigMap//x":     {Cluster: "prod", Kind: "ConfigMap", Name: "x"},
		"ConfigMap/shop-pr-7/a": {Preview: 7, Cluster: "prod", Project: "shop", App: "api", Component: "web", Kind: "ConfigMap", Namespace: "shop-pr-7", Name: "a"},
	} {
		if got[key].ObjectID != id {
			t.Errorf("%s: identity %+v, want %+v", key, got[key].ObjectID, id)
		}
	}
	if a := got["prod:Deployment/shop/api-web"].AppKey(); a != "prod/shop/api" {
		t.Errorf("AppKey %q", a)
	}
	if a := got["ConfigMap/shop-pr-7/a"].AppKey(); a != "" {
		t.Errorf("a preview's object is of app %q", a)
	}
	for key, o := range got {
		if d, want := o.ComponentDir(), layout.ComponentDirOf(o.File); d != want {
			t.Errorf("%s: ComponentDir %q, layout.ComponentDirOf %q", key, d, want)
		}
		if d, want := o.FluxDir(), layout.FluxDirAbove(o.File); d != want {
			t.Errorf("%s: FluxDir %q, layout.FluxDirAbove %q", key, d, want)
		}
		if a, want := o.AppKey(), layout.AppOf(o.File); a != want {
			t.Errorf("%s: AppKey %q, layout.AppOf %q", key, a, want)
		}
	}
}

func TestKeyOfAnObjectNotRead(t *testing.T) {
	t.Parallel()
	o := Object{ObjectID: ObjectID{Cluster: "prod", Kind: "ConfigMap", Namespace: "shop", Name: "x"}}
	if k := o.Key(); k != "prod:ConfigMap/shop/x" {
		t.Errorf("key %q", k)
	}
}

// TestScanObjectReadsWhatReadObjectReads: the fields a scan reads are
// those of the whole document.
func TestScanObjectReadsWhatReadObjectReads(t *testing.T) {
	t.Parallel()
	fields := [][]string{{"spec", "path"}, {"spec", "ref", "digest"}, {"metadata", "labels", "a"}}
	for _, text := range []string{
		"apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  labels:\n    a: b\n  name: n\n  namespace: ns\nspec:\n  ref:\n    digest: sha256:0a\n  url: oci://r/f\n",
		"kind: Kustomization\nspec:\n  path: |\n    x: y\n",
		"kind: Kustomization\nmetadata:\n  name: [a, b]\n",
	} {
		full, fok := ReadObject("apps/c/p/_flux/a.yaml", []byte(text))
		light, lok := ScanObject("apps/c/p/_flux/a.yaml", []byte(text), fields)
		if fok != lok || light.ObjectID != full.ObjectID || light.Key() != full.Key() {
			t.Errorf("%q: scan reads %+v (%v), the parser %+v (%v)", text, light.ObjectID, lok, full.ObjectID, fok)
		}
		for _, f := range fields {
			if got, want := at(light.Obj, f), at(full.Obj, f); !reflect.DeepEqual(got, want) {
				t.Errorf("%q: %v is %v, parsed %v", text, f, got, want)
			}
		}
	}
}

func at(m map[string]any, f []string) any {
	var v any = m
	for _, k := range f {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	return v
}
