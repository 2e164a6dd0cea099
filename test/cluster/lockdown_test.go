package cluster

import (
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// The lockdown the test cluster runs Flux with is the one deploy/flux
// ships for `flux bootstrap`: building that kustomization.yaml over
// stand-ins of bootstrap's files gives kustomize- and helm-controller
// exactly LockdownArgs (kustomize-controller also --no-remote-bases, which
// Start always passes), leaves the other controllers alone, and makes the
// flux-system Kustomization run as RootServiceAccount.
func TestLockdownPatchIsTheTestClusters(t *testing.T) {
	t.Parallel()
	patch, err := os.ReadFile("../../deploy/flux/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	deployment := func(name string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        args: [--log-level=info]\n---\n"
	}
	fs := filesys.MakeFsInMemory()
	for name, data := range map[string]string{
		"kustomization.yaml":   string(patch),
		"gotk-components.yaml": deployment("source-controller") + deployment("kustomize-controller") + deployment("helm-controller") + deployment("notification-controller"),
		"gotk-sync.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./clusters/c, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n",
	} {
		if err := fs.WriteFile(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, ".")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"source-controller":       {"--log-level=info"},
		"notification-controller": {"--log-level=info"},
		"helm-controller":         append([]string{"--log-level=info"}, LockdownArgs...),
		"kustomize-controller":    append(append([]string{"--log-level=info"}, LockdownArgs...), "--no-remote-bases=true"),
	}
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		switch r.GetKind() {
		case "Deployment":
			var args []string
			for _, a := range m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"].([]any) {
				args = append(args, a.(string))
			}
			if !slices.Equal(args, want[r.GetName()]) {
				t.Errorf("%s runs with %q, want %q", r.GetName(), args, want[r.GetName()])
			}
		case "Kustomization":
			if sa := m["spec"].(map[string]any)["serviceAccountName"]; sa != RootServiceAccount {
				t.Errorf("the flux-system Kustomization runs as %v, want %s", sa, RootServiceAccount)
			}
		}
	}
}
