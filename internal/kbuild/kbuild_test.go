package kbuild

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func TestRun(t *testing.T) {
	t.Parallel()
	fsys := filesys.MakeFsInMemory()
	for p, b := range map[string]string{
		"/app/kustomization.yaml": "resources: [cm.yaml]\nnamespace: shop\n",
		"/app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
		"/up/kustomization.yaml":  "resources: [../app/cm.yaml]\n",
	} {
		if err := fsys.WriteFile(p, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	rm, err := Run(fsys, "/app", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := rm.Resources(); len(got) != 1 || got[0].GetName() != "web" || got[0].GetNamespace() != "shop" {
		t.Errorf("built %v, want ConfigMap shop/web", rm.AllIds())
	}
	// Confined to its folder, a build may not read a file above it.
	if _, err := Run(fsys, "/up", true); err == nil || !strings.Contains(err.Error(), "security") {
		t.Errorf("a root-only build read ../app/cm.yaml: err = %v", err)
	}
	if _, err := Run(fsys, "/up", false); err != nil {
		t.Errorf("an unconfined build: %v", err)
	}
}
