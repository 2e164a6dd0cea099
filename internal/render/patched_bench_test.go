package render

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// patchedRepo is an apps repository of one app whose web component (a
// Deployment, its Service, Ingress and ConfigMap of files) has two
// patches, a JSON 6902 one and a strategic merge one.
func patchedRepo(b *testing.B) *load.Repo {
	dir := b.TempDir()
	files := map[string]string{
		"platform.yaml": "build: {pin: false}\npolicy: {pod_security: restricted}\n",
		"apps/shop/web/app.yaml": `name: web
components:
  - name: web
    type: workload
    workload_spec:
      image: nginx:1.27
      port: 8080
      files: [{path: /etc/web/config.yaml, content: "a: 1\n"}]
      ingress: {enabled: true, host: shop.example.com}
      patches:
        - target: {kind: Deployment}
          patch: |
            - op: add
              path: /spec/template/spec/hostAliases
              value: [{ip: 10.0.0.1, hostnames: [legacy]}]
        - patch: |
            apiVersion: v1
            kind: Service
            metadata: {name: web-web}
            spec: {sessionAffinity: ClientIP}
`,
	}
	golden.WriteFiles(b, dir, files)
	repo, ps, err := Load(b.Context(), Dir(dir))
	if err != nil || ps.HasErrors() {
		b.Fatalf("%v %v", err, ps)
	}
	return repo
}

// BenchmarkCheckPatchedComponent is what render validate adds for one
// component with patches: render its folder, bound the patches, build it
// with kustomize and check the result.
func BenchmarkCheckPatchedComponent(b *testing.B) {
	repo := patchedRepo(b)
	for b.Loop() {
		if ps := CheckPatches(repo); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}

// BenchmarkKustomizeComponentFolder is one kustomize build of the same
// folder, the yardstick of BenchmarkCheckPatchedComponent.
func BenchmarkKustomizeComponentFolder(b *testing.B) {
	repo := patchedRepo(b)
	a := repo.Apps[0]
	dir, files, err := generate.NewComponents(repo, generate.Options{}).Folder(a, &a.Spec.Components[0])
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := buildFolder(dir, files, a.Project, -1); err != nil {
			b.Fatal(err)
		}
	}
}
