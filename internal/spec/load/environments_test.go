package load_test

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/spec/load"
)

const envPlatform = `environments:
  - {name: staging, cluster: stage-eu}
  - {name: production, cluster: prod-eu, promote_from: staging}
`

// An app deploys once per environment, on the environment's cluster, with
// that environment's overrides merged into its components (RFC 7386: maps
// merge, null removes); a platform without environments keeps one copy on
// the app's cluster.
func TestEnvironmentsExpand(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"platform.yaml": []byte(envPlatform),
		"apps/shop/api/app.yaml": []byte(`name: api
components:
  - name: api
    type: workload
    workload_spec:
      image: myorg/api:v1
      port: 8000
      replicas: 2
      resources: {requests: {cpu: 100m, memory: 64Mi}}
      ingress: {enabled: true, host: api.staging.example.com}
  - name: worker
    type: workload
    workload_spec: {image: myorg/worker:v1}
environments:
  production:
    components:
      api:
        workload_spec:
          replicas: 4
          resources: {requests: {cpu: null}}
          ingress: {host: api.example.com}
`),
		"apps/shop/docs/app.yaml": []byte(`name: docs
components:
  - {name: web, type: workload, workload_spec: {image: myorg/docs:v1, port: 80}}
environments:
  production: {enabled: false}
`),
	}
	repo, ps := newLoader(t, "").LoadFiles(files)
	if ps.HasErrors() {
		t.Fatal(ps)
	}
	type copyOf struct{ key, env string }
	var got []copyOf
	for _, a := range repo.Apps {
		got = append(got, copyOf{a.Key(), a.Environment})
	}
	want := []copyOf{{"prod-eu/shop/api", "production"}, {"stage-eu/shop/api", "staging"}, {"stage-eu/shop/docs", "staging"}}
	if len(got) != len(want) {
		t.Fatalf("apps %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("app %d: %v, want %v", i, got[i], want[i])
		}
	}
	prod, stage := repo.App("prod-eu", "shop", "api"), repo.App("stage-eu", "shop", "api")
	pw, sw := prod.Component("api").WorkloadSpec, stage.Component("api").WorkloadSpec
	if *pw.Replicas != 4 || *sw.Replicas != 2 {
		t.Errorf("replicas: production %d, staging %d; want 4 and 2", *pw.Replicas, *sw.Replicas)
	}
	if pw.Ingress.Host != "api.example.com" || !pw.Ingress.Enabled || sw.Ingress.Host != "api.staging.example.com" {
		t.Errorf("ingress: production %+v, staging %+v", pw.Ingress, sw.Ingress)
	}
	if cpu := pw.Resources.Requests.CPU; cpu != nil {
		t.Errorf("production cpu request %q: null should remove it", cpu)
	}
	if mem := pw.Resources.Requests.Memory; mem == nil || mem.String() != "64Mi" {
		t.Errorf("production memory request %v: the merge should keep it", mem)
	}
	if prod.Component("worker").WorkloadSpec.Image != "myorg/worker:v1" {
		t.Errorf("the component without an override changed: %+v", prod.Component("worker").WorkloadSpec)
	}
	if s1, _ := prod.Doc.Sum(); s1 == func() [32]byte { s, _ := stage.Doc.Sum(); return s }() {
		t.Error("the production copy has the staging copy's digest")
	}

	// Without environments: one copy, on the app's cluster, no environment.
	delete(files, "platform.yaml")
	delete(files, "apps/shop/docs/app.yaml")
	files["apps/shop/api/app.yaml"] = []byte("name: api\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: myorg/api:v1}}\n")
	repo, ps = newLoader(t, "").LoadFiles(files)
	if ps.HasErrors() || len(repo.Apps) != 1 || repo.Apps[0].Environment != "" || repo.Apps[0].Cluster != load.DefaultCluster {
		t.Fatalf("without environments: %v %+v", ps, repo.Apps)
	}
}
