package generate_test

import (
	"fmt"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
)

// fluxObjects decodes the Flux Kustomizations of an app file.
func fluxObjects(t *testing.T, data []byte) map[string]kustomizev1.Kustomization {
	t.Helper()
	out := map[string]kustomizev1.Kustomization{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var k kustomizev1.Kustomization
		if err := yaml.UnmarshalStrict([]byte(doc), &k); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		out[k.Name] = k
	}
	return out
}

func depNames(k kustomizev1.Kustomization) []string {
	out := []string{}
	for _, d := range k.Spec.DependsOn {
		out = append(out, d.Name)
	}
	return out
}

// A dependsOn is written only where a readiness dependency exists: an
// explicit depends_on, or an export whose value comes from a Secret. A
// workload's URL and an addon's host are literals and order nothing; the
// project's Namespace is applied by the cluster's root Kustomization.
func TestDependsOnOnlyForReadiness(t *testing.T) {
	t.Parallel()
	const platform = "apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\n"
	addon := `  - name: db
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.example.com, name: postgresql, version: 13.4.4}
      values: {auth: {database: a, username: a}}
`
	tests := []struct {
		name  string
		comps string
		want  map[string][]string // Kustomization → dependsOn
	}{
		{
			name: "url export orders nothing",
			comps: `  - {name: api, type: workload, workload_spec: {image: x/api:1, port: 8080}}
  - name: worker
    type: workload
    workload_spec:
      image: x/worker:1
      env: [{name: API_URL, export_ref: {component: api, export_key: url}}]
`,
			want: map[string][]string{"p-a-api": {}, "p-a-worker": {}},
		},
		{
			name: "explicit depends_on is kept",
			comps: `  - {name: api, type: workload, workload_spec: {image: x/api:1, port: 8080}}
  - {name: cron, type: workload, depends_on: [api], workload_spec: {image: x/cron:1}}
`,
			want: map[string][]string{"p-a-api": {}, "p-a-cron": {"p-a-api"}},
		},
		{
			name: "a secret export orders the consumer after the addon",
			comps: addon + `  - name: api
    type: workload
    workload_spec:
      image: x/api:1
      env: [{name: DB_PASSWORD, export_ref: {component: db, export_key: password}}]
`,
			want: map[string][]string{"p-a-db": {}, "p-a-api": {"p-a-db"}},
		},
		{
			name: "a composed export holding a password orders too",
			comps: addon + `  - name: api
    type: workload
    workload_spec:
      image: x/api:1
      env: [{name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}]
`,
			want: map[string][]string{"p-a-db": {}, "p-a-api": {"p-a-db"}},
		},
		{
			name: "a plain addon export orders nothing",
			comps: addon + `  - name: api
    type: workload
    workload_spec:
      image: x/api:1
      env: [{name: DB_HOST, export_ref: {component: db, export_key: host}}]
`,
			want: map[string][]string{"p-a-db": {}, "p-a-api": {}},
		},
		{
			name: "a job waits even for an address known at render time",
			comps: `  - {name: db, type: workload, workload_spec: {image: x/db:1, port: 5432}}
  - name: migrate
    type: job
    workload_spec:
      image: x/migrate:1
      restart_policy: Never
      env: [{name: DB_HOST, export_ref: {component: db, export_key: host}}]
`,
			want: map[string][]string{"p-a-db": {}, "p-a-migrate": {"p-a-db"}},
		},
		{
			name: "a sidecar reading a Secret orders its workload",
			comps: addon + `  - name: api
    type: workload
    workload_spec:
      image: x/api:1
      sidecars:
        - name: exporter
          image: x/exporter:1
          env: [{name: DB_PASSWORD, export_ref: {component: db, export_key: password}}]
`,
			want: map[string][]string{"p-a-db": {}, "p-a-api": {"p-a-db"}},
		},
		{
			name: "depends_on and a secret export on the same component: one entry",
			comps: addon + `  - name: api
    type: workload
    depends_on: [db]
    workload_spec:
      image: x/api:1
      env: [{name: DB_PASSWORD, export_ref: {component: db, export_key: password}}]
`,
			want: map[string][]string{"p-a-db": {}, "p-a-api": {"p-a-db"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := loadRepo(t, map[string][]byte{
				"platform.yaml":     []byte(platform),
				"apps/p/a/app.yaml": []byte("name: a\ncomponents:\n" + tt.comps),
			}, "")
			files := render(t, repo, nil)
			got := map[string][]string{}
			for name, k := range fluxObjects(t, files["clusters/c/apps/p-a.yaml"]) {
				got[name] = depNames(k)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("dependsOn (-want +got):\n%s", d)
			}
			ns, ok := files["clusters/c/projects/p.yaml"]
			if !ok || !strings.Contains(string(ns), "\nkind: Namespace\n") {
				t.Errorf("clusters/c/projects/p.yaml = %q, want the project's Namespace", ns)
			}
			for p := range files {
				if strings.Contains(p, "/_project/") {
					t.Errorf("%s: a project folder for a cluster the root Kustomization applies", p)
				}
			}
		})
	}
}

// On a cluster Flux reaches through a kubeconfig the root Kustomization
// cannot create the Namespace there: a project Kustomization applies it
// through the kubeconfig, and the project's components depend on it.
func TestRemoteClusterKeepsProjectKustomization(t *testing.T) {
	t.Parallel()
	repo := loadRepo(t, map[string][]byte{
		"platform.yaml":     []byte("apps_domain: apps.test\nclusters: [{name: c, kubeconfig_secret: {name: kc, key: value}}]\nbuild: {pin: false}\n"),
		"apps/p/a/app.yaml": []byte("name: a\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: x/api:1}}\n"),
	}, "")
	files := render(t, repo, nil)
	ks := fluxObjects(t, files["clusters/c/apps/p-a.yaml"])
	if got := depNames(ks["p-a-api"]); !cmp.Equal(got, []string{"project-p"}) {
		t.Errorf("dependsOn = %q, want [project-p]", got)
	}
	proj := fluxObjects(t, files["clusters/c/projects/p.yaml"])["project-p"]
	if proj.Spec.KubeConfig == nil || proj.Spec.Path != "./fleet/apps/c/p/_project" {
		t.Errorf("project Kustomization = %+v, want the kubeconfig and path ./fleet/apps/c/p/_project", proj.Spec)
	}
	if _, ok := files["apps/c/p/_project/namespace-p.yaml"]; !ok {
		t.Error("no Namespace file in the project folder")
	}
}

// Shards from platform.yaml label every Kustomization of an app with one
// shard, the same for all its components, and spread apps over all shards.
func TestShardLabels(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"platform.yaml": []byte("apps_domain: apps.test\nclusters: [{name: c, shards: [one, two]}]\nbuild: {pin: false}\n"),
	}
	const n = 40
	for i := range n {
		files[fmt.Sprintf("apps/p/a%02d/app.yaml", i)] = []byte(fmt.Sprintf("name: a%02d\ncomponents:\n"+
			"  - {name: api, type: workload, workload_spec: {image: x/api:1, port: 80}}\n"+
			"  - {name: cron, type: workload, depends_on: [api], workload_spec: {image: x/cron:1}}\n", i))
	}
	out := render(t, loadRepo(t, files, ""), nil)
	count := map[string]int{}
	for i := range n {
		app := fmt.Sprintf("a%02d", i)
		ks := fluxObjects(t, out["clusters/c/apps/p-"+app+".yaml"])
		api, cron := ks["p-"+app+"-api"].Labels[layout.LabelShard], ks["p-"+app+"-cron"].Labels[layout.LabelShard]
		if api == "" || api != cron {
			t.Errorf("%s: shards %q and %q, want one shard for the whole app", app, api, cron)
		}
		if want := generate.Shard([]string{"one", "two"}, layout.AppRef{Project: "p", Name: app}); api != want {
			t.Errorf("%s: shard %q, want %q", app, api, want)
		}
		count[api]++
	}
	if count["one"] < n/4 || count["two"] < n/4 || count["one"]+count["two"] != n {
		t.Errorf("apps per shard = %v, want both shards used", count)
	}
	// Without shards, no label.
	plain := render(t, loadRepo(t, map[string][]byte{
		"platform.yaml":     []byte("apps_domain: apps.test\nclusters: [{name: c}]\nbuild: {pin: false}\n"),
		"apps/p/a/app.yaml": []byte("name: a\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: x/api:1}}\n"),
	}, ""), nil)
	if l, ok := fluxObjects(t, plain["clusters/c/apps/p-a.yaml"])["p-a-api"].Labels[layout.LabelShard]; ok {
		t.Errorf("shard label %q without shards in platform.yaml", l)
	}
}
