package load_test

import (
	"slices"
	"testing"

	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// A preview takes the apps changed and those they reference, each once and
// as written (no environment's overrides), in the project's preview
// namespace on the previews' cluster, every ingress host the default one
// under previews.apps_domain; an app that opts out is skipped, and so is
// one that needs it.
func TestPreviewOf(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"platform.yaml": []byte(envPlatform + "previews: {cluster: stage-eu, apps_domain: preview.example.com}\n"),
		"apps/shop/api/app.yaml": []byte(`name: api
components:
  - name: api
    type: workload
    workload_spec:
      image: myorg/api:v1
      port: 8000
      ingress: {enabled: true, host: api.example.com}
      env: [{name: DOCS, export_ref: {app: docs, component: web, export_key: url}}]
  - name: admin
    type: workload
    workload_spec: {image: myorg/admin:v1, port: 80, ingress: {enabled: true, host: admin.example.com}}
environments:
  production:
    components:
      api: {workload_spec: {replicas: 4}}
`),
		"apps/shop/docs/app.yaml": []byte(`name: docs
components:
  - {name: web, type: workload, workload_spec: {image: myorg/docs:v1, port: 80}}
`),
		"apps/shop/blog/app.yaml": []byte(`name: blog
components:
  - {name: web, type: workload, workload_spec: {image: myorg/blog:v1, port: 80, env: [{name: X, export_ref: {app: secret, component: web, export_key: url}}]}}
`),
		"apps/shop/secret/app.yaml": []byte(`name: secret
components:
  - {name: web, type: workload, workload_spec: {image: myorg/secret:v1, port: 80}}
environments:
  preview: {enabled: false}
`),
	}
	l := newLoader(t, "")
	repo, ps := l.LoadFiles(files)
	if ps.HasErrors() {
		t.Fatal(ps)
	}
	p, ps := l.PreviewOf(repo, 12, []string{"shop/api", "shop/blog", "shop/gone"})
	if ps.HasErrors() {
		t.Fatal(ps)
	}
	if want := []string{"shop/api", "shop/docs"}; !slices.Equal(p.Apps, want) {
		t.Errorf("apps = %v, want %v", p.Apps, want)
	}
	wantSkipped := []load.Skipped{
		{App: "shop/blog", Reason: "it references shop/secret, which is not previewed"},
		{App: "shop/secret", Reason: "environments.preview.enabled: false"},
	}
	if !slices.Equal(p.Skipped, wantSkipped) {
		t.Errorf("skipped = %v, want %v", p.Skipped, wantSkipped)
	}
	api := p.Repo.App("stage-eu", "shop-pr12", "api")
	if api == nil {
		t.Fatalf("no preview copy of api: %v", p.Repo.Apps)
	}
	if api.Environment != "pr-12" || api.ProjectName() != "shop" {
		t.Errorf("api: environment %q, project %q", api.Environment, api.ProjectName())
	}
	if api.Spec.Components[0].WorkloadSpec.Replicas != nil {
		t.Errorf("api took an environment's override: replicas %v", *api.Spec.Components[0].WorkloadSpec.Replicas)
	}
	plat := &p.Repo.Platform
	for i, want := range []string{"api-shop-pr12.preview.example.com", "admin-api-shop-pr12.preview.example.com"} {
		if got := load.IngressHost(api, &api.Spec.Components[i], plat); got != want {
			t.Errorf("host of %s = %q, want %q", api.Spec.Components[i].Name, got, want)
		}
	}
	// The repository's own copies are untouched.
	for _, a := range repo.Apps {
		if a.Spec.Name == "api" && a.Spec.Components[0].WorkloadSpec.Ingress.Host != "api.example.com" {
			t.Errorf("%s: the preview changed the app's host to %q", a.Key(), a.Spec.Components[0].WorkloadSpec.Ingress.Host)
		}
	}
	if p.Build.App("stage-eu", "shop", "api") == nil {
		t.Errorf("the build copies are not in their project: %v", p.Build.Apps)
	}
	if got := p.BuildNode("stage-eu/shop/api/api"); got != "stage-eu/shop-pr12/api/api" {
		t.Errorf("BuildNode = %q", got)
	}
	if len(p.Repo.Order) != 3 {
		t.Errorf("order = %v", p.Repo.Order)
	}
}
