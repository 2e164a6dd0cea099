package verify

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// policyPlatform is the platform of the cases below: one production
// cluster, no default resources unless a case adds them.
const policyPlatform = `apps_domain: apps.example.com
cert_issuer: {name: letsencrypt}
default_cluster: prod
clusters: [{name: prod, production: true}, {name: dev}]
`

// TestPolicySameInValidateAndVerify runs one table of specs through
// validate (the loader's problems) and through render and verify (the
// fleet's findings): the policy checks say the same things, with the same
// severities, at both ends.
func TestPolicySameInValidateAndVerify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		platform string // added to policyPlatform
		app      string
		want     []string // severity: message, sorted
	}{{
		name: "no requests and no probes",
		app: `name: web
components:
  - {name: web, type: workload, workload_spec: {image: nginx:1.27, port: 80, replicas: 2}}
`,
		want: []string{
			`warning: container "web" has no readinessProbe or livenessProbe (policy require_probes)`,
			`warning: container "web" sets no cpu or memory request (policy require_requests)`,
		},
	}, {
		name:     "health_check is both probes; the platform's requests count; a sidecar's own probes",
		platform: "defaults: {resources: {requests: {cpu: 50m, memory: 64Mi}}}\n",
		app: `name: web
components:
  - name: web
    type: workload
    workload_spec:
      image: nginx:1.27
      port: 80
      replicas: 2
      health_check: {path: /healthz}
      sidecars:
        - {name: proxy, image: envoyproxy/envoy:v1.31.0, ports: [{name: admin, port: 9901}], probes: {readiness: {tcp: {port: 9901}}}}
`,
		want: []string{`warning: sidecar "proxy" has no livenessProbe (policy require_probes)`},
	}, {
		name:     "none removes a default request; a job's pods need no probes",
		platform: "defaults: {resources: {requests: {cpu: 50m, memory: 64Mi}}}\n",
		app: `name: jobs
components:
  - name: migrate
    type: job
    workload_spec:
      image: myorg/migrate:1.0.0
      resources: {requests: {memory: none}}
      init_containers: [{name: wait, image: busybox:1.36, command: [sh, -c, "true"], resources: {requests: {cpu: none}}}]
`,
		want: []string{
			`warning: container "migrate" sets no memory request (policy require_requests)`,
			`warning: init container "wait" sets no cpu request (policy require_requests)`,
		},
	}, {
		name:     "production replicas, an ingress without TLS, severities from platform.yaml",
		platform: "defaults: {resources: {requests: {cpu: 50m, memory: 64Mi}}}\npolicy: {production_replicas: error, require_tls: warning, require_probes: off}\n",
		app: `name: shop
components:
  - name: one
    type: workload
    workload_spec: {image: myorg/one:1.0.0, port: 8080, ingress: {enabled: true, host: one.example.com, tls: false}}
  - name: scaled
    type: workload
    workload_spec: {image: myorg/scaled:1.0.0, autoscaling: {min_replicas: 1, max_replicas: 3}}
  - name: three
    type: workload
    workload_spec: {image: myorg/three:1.0.0, replicas: 3}
`,
		want: []string{
			`error: runs 1 replica(s) on production cluster prod and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)`,
			`warning: Ingress has no TLS (policy require_tls)`,
		},
	}, {
		name:     "a paused app, and an app on a cluster that is not production",
		platform: "defaults: {resources: {requests: {cpu: 50m, memory: 64Mi}}}\npolicy: {require_probes: off}\n",
		app: `name: shop
paused: true
components:
  - {name: one, type: workload, workload_spec: {image: myorg/one:1.0.0}}
---
name: dev
cluster: dev
components:
  - {name: one, type: workload, workload_spec: {image: myorg/one:1.0.0}}
`,
	}, {
		name: "environments: each copy on its cluster",
		platform: "defaults: {resources: {requests: {cpu: 50m, memory: 64Mi}}}\npolicy: {require_probes: off}\n" +
			"environments: [{name: staging, cluster: dev}, {name: production, cluster: prod, promote_from: staging}]\n",
		app: `name: shop
components:
  - {name: one, type: workload, workload_spec: {image: myorg/one:1.0.0}}
  - {name: two, type: workload, workload_spec: {image: myorg/two:1.0.0}}
environments:
  production: {components: {two: {workload_spec: {replicas: 2}}}}
`,
		want: []string{
			`warning: runs 1 replica(s) on production cluster prod and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)`,
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string][]byte{"platform.yaml": []byte(policyPlatform + tc.platform)}
			for i, doc := range strings.Split(tc.app, "---\n") {
				files[fmt.Sprintf("apps/shop/app%d/app.yaml", i)] = []byte(doc)
			}
			l := spectest.Loader(t)
			repo, ps := l.LoadFiles(files)
			var validated []string
			for _, p := range ps {
				if strings.Contains(p.Message, "(policy ") {
					validated = append(validated, string(p.Severity)+": "+p.Message)
				} else if p.Severity == diag.Error {
					t.Fatalf("validate: %v", p)
				}
			}
			slices.Sort(validated)
			if diff := cmp.Diff(tc.want, validated, cmp.Transformer("nil", func(s []string) []string { return append([]string{}, s...) })); diff != "" {
				t.Errorf("validate (-want +got):\n%s", diff)
			}

			// Every environment's copy is rendered, as a promotion does.
			promote := func(a *load.LoadedApp) (generate.Promotion, bool) {
				return generate.Promotion{From: "staging", AppsCommit: "0123456789abcdef0123456789abcdef01234567"}, true
			}
			fleet, err := generate.Render(repo, generate.Options{Platform: &repo.Platform, Promote: promote})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(t.Context(), Options{FleetDir: golden.TempFiles(t, fleet.Map()), Platform: &repo.Platform})
			if err != nil {
				t.Fatal(err)
			}
			var verified []string
			for _, f := range rep.Findings {
				switch f.Check {
				case CheckRequireRequests, CheckRequireProbes, CheckRequireTLS, CheckProductionReplicas:
					verified = append(verified, string(f.Severity)+": "+f.Message)
				}
			}
			slices.Sort(verified)
			if diff := cmp.Diff(validated, verified, cmp.Transformer("nil", func(s []string) []string { return append([]string{}, s...) })); diff != "" {
				t.Errorf("validate and verify differ (-validate +verify):\n%s", diff)
			}
		})
	}
}
