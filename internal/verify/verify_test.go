package verify

import (
	"bytes"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spec"
)

var examples struct {
	once  sync.Once
	repo  *spec.Repo
	files map[string][]byte
}

// exampleFleet returns a copy of the rendered examples and their specs.
func exampleFleet(t testing.TB) (*spec.Repo, map[string][]byte) {
	t.Helper()
	examples.once.Do(func() {
		examples.repo = loadExamples(t)
		examples.files = renderExamples(t)
	})
	return examples.repo, maps.Clone(examples.files)
}

// edit replaces old with new in a file, failing when old is not there.
func edit(t testing.TB, files map[string][]byte, file, old, new string) {
	t.Helper()
	data, ok := files[file]
	if !ok || !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	files[file] = bytes.Replace(data, []byte(old), []byte(new), 1)
}

// verifyFleet writes files as a fleet folder named "fleet" and verifies it.
func verifyFleet(t testing.TB, files map[string][]byte, opts Options) *Report {
	t.Helper()
	root := writeTree(t, files)
	repo, _ := exampleFleet(t)
	opts.FleetDir = root
	opts.Display = "fleet"
	opts.FleetPath = "fleet"
	if opts.Platform == nil {
		plat := repo.Platform
		opts.Platform = &plat
	}
	rep, err := Run(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// lines returns the findings of the given checks as text lines.
func lines(rep *Report, checks ...Check) []string {
	out := []string{}
	for _, f := range rep.Findings {
		if len(checks) == 0 || slices.Contains(checks, f.Check) {
			out = append(out, f.String())
		}
	}
	return out
}

const (
	ordersAPI  = "apps/prod-eu/shop/orders/api/deployment-orders-api.yaml"
	myAPI      = "apps/prod-eu/shop/my-api/api/deployment-my-api-api.yaml"
	shopMyAPI  = "clusters/prod-eu/apps/shop-my-api.yaml"
	shopOrders = "clusters/prod-eu/apps/shop-orders.yaml"
)

func TestChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(t testing.TB, files map[string][]byte)
		opts   func(t testing.TB, o *Options)
		checks []Check
		want   []string
	}{
		// Drift.
		{name: "drift: clean", checks: []Check{CheckDrift}, opts: withApps, want: []string{}},
		{
			name:   "drift: hand edit",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, ordersAPI, "replicas: 1", "replicas: 3") },
			opts:   withApps, checks: []Check{CheckDrift},
			want: []string{"fleet/" + ordersAPI + ":16: differs from what the specs render (edited by hand?); run render"},
		},
		{
			name: "drift: missing file",
			mutate: func(t testing.TB, f map[string][]byte) {
				delete(f, "apps/prod-eu/shop/orders/api/service-orders-api.yaml")
			},
			opts: withApps, checks: []Check{CheckDrift},
			want: []string{"fleet/apps/prod-eu/shop/orders/api/service-orders-api.yaml: missing: the specs render this file; run render"},
		},
		{
			name: "drift: stray generated file",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["apps/prod-eu/shop/gone/web/kustomization.yaml"] = f["apps/prod-eu/shop/orders/api/kustomization.yaml"]
			},
			opts: withApps, checks: []Check{CheckDrift},
			want: []string{"fleet/apps/prod-eu/shop/gone/web/kustomization.yaml:1: generated file that no spec renders any more; run render to delete it"},
		},
		// YAML.
		{
			name:   "yaml: syntax error",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, ordersAPI, "  replicas: 1\n", "  replicas: [1\n") },
			checks: []Check{CheckYAML},
			want:   []string{"fleet/" + ordersAPI + ":16: did not find expected ',' or ']'"},
		},
		// Builds.
		{name: "build: clean", checks: []Check{CheckBuild}, want: []string{}},
		{
			name: "build: missing resource",
			mutate: func(t testing.TB, f map[string][]byte) {
				delete(f, "apps/prod-eu/shop/orders/api/service-orders-api.yaml")
			},
			checks: []Check{CheckBuild},
			want: []string{"fleet/" + shopOrders + ":23: Kustomization/shop-orders-api: spec.path: kustomize build ./fleet/apps/prod-eu/shop/orders/api: " +
				"accumulating resources: accumulation err='accumulating resources from 'service-orders-api.yaml': " +
				"open fleet/apps/prod-eu/shop/orders/api/service-orders-api.yaml: file does not exist': must build at directory: " +
				"not a valid directory: evalsymlink failure on 'fleet/apps/prod-eu/shop/orders/api/service-orders-api.yaml' : " +
				"lstat fleet/apps/prod-eu/shop/orders/api/service-orders-api.yaml: no such file or directory"},
		},
		{
			name:   "build: no such folder",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, shopOrders, "orders/api\n", "orders/apii\n") },
			checks: []Check{CheckBuild},
			want: []string{
				"fleet/apps/prod-eu/shop/orders/api/kustomization.yaml:1: warning: no Flux Kustomization builds this folder",
				"fleet/" + shopOrders + ":23: Kustomization/shop-orders-api: spec.path: kustomize build ./fleet/apps/prod-eu/shop/orders/apii: no such folder in the fleet",
			},
		},
		// Flux dependencies.
		{name: "depends-on: clean", checks: []Check{CheckDeps}, want: []string{}},
		{
			name: "depends-on: unknown",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopMyAPI, "- name: shop-my-api-postgres", "- name: shop-my-api-db")
			},
			checks: []Check{CheckDeps},
			want:   []string{"fleet/" + shopMyAPI + ":53: Kustomization/shop-my-api-api: spec.dependsOn[1].name: depends on Kustomization flux-system/shop-my-api-db, which no fleet file defines"},
		},
		{
			name: "depends-on: cycle",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopMyAPI, "  - name: project-shop\n  interval", "  - name: project-shop\n  - name: shop-my-api-api\n  interval")
			},
			checks: []Check{CheckDeps},
			want:   []string{"fleet/" + shopMyAPI + ":34: Kustomization/shop-my-api-api: spec.dependsOn: dependency cycle: flux-system/shop-my-api-api -> flux-system/shop-my-api-postgres -> flux-system/shop-my-api-api"},
		},
		// API validity.
		{name: "api: clean", checks: []Check{CheckAPI, CheckKind}, want: []string{}},
		{
			name: "api: unknown field",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersAPI, "        name: api\n", "        name: api\n        imagePullPolicyy: Always\n")
			},
			checks: []Check{CheckAPI},
			want:   []string{"fleet/" + ordersAPI + ":43: Deployment/orders-api: spec.template.spec.containers[0].imagePullPolicyy: unknown field"},
		},
		{
			name:   "api: wrong type",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, ordersAPI, "replicas: 1", "replicas: one") },
			checks: []Check{CheckAPI},
			want:   []string{"fleet/" + ordersAPI + ":16: Deployment/orders-api: spec.replicas: must be an integer, not a string"},
		},
		{
			name:   "api: bad quantity",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, ordersAPI, "cpu: 50m", "cpu: fifty") },
			checks: []Check{CheckAPI},
			want:   []string{"fleet/" + ordersAPI + ":57: Deployment/orders-api: spec.template.spec.containers[0].resources.requests.cpu: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
		},
		{
			name: "api: missing image and selector",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersAPI, "      - image: myorg/orders-api:2.4.1\n        livenessProbe:", "      - livenessProbe:")
				edit(t, f, ordersAPI, "  selector:\n    matchLabels:\n      app.kubernetes.io/instance: orders-api\n      app.kubernetes.io/name: api\n", "")
			},
			checks: []Check{CheckAPI},
			want: []string{
				"fleet/" + ordersAPI + ":15: Deployment/orders-api: spec.selector: required field is missing",
				"fleet/" + ordersAPI + ":30: Deployment/orders-api: spec.template.spec.containers[0].image: required field is missing",
			},
		},
		{
			name: "api: selector does not match",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersAPI, "      app.kubernetes.io/name: api\n", "      app.kubernetes.io/name: apii\n")
			},
			checks: []Check{CheckAPI},
			want:   []string{"fleet/" + ordersAPI + ":18: Deployment/orders-api: spec.selector.matchLabels: selector does not match the pod template's labels (app.kubernetes.io/name)"},
		},
		{
			name: "api: Flux Kustomization without interval and sourceRef",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrders, "  interval: 10m0s\n  path: ./fleet/apps/prod-eu/shop/orders/api", "  path: ./fleet/apps/prod-eu/shop/orders/api")
				edit(t, f, shopOrders, "  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  targetNamespace: shop\n  timeout: 10m0s\n  wait: true\n---",
					"  targetNamespace: shop\n  timeout: 10m0s\n  wait: true\n---")
			},
			checks: []Check{CheckAPI},
			want: []string{
				"fleet/" + shopOrders + ":19: Kustomization/shop-orders-api: spec.interval: required field is missing",
				"fleet/" + shopOrders + ":19: Kustomization/shop-orders-api: spec.sourceRef: required field is missing",
			},
		},
		{
			name: "kind: unknown kind warns",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["clusters/prod-eu/extra.yaml"] = []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
			},
			checks: []Check{CheckKind},
			want:   []string{"fleet/clusters/prod-eu/extra.yaml:1: warning: Widget/w: unknown kind example.com/v1 Widget: no API type to check it against"},
		},
		{
			name: "kind: unknown kind fails with --strict-kinds",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["clusters/prod-eu/extra.yaml"] = []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
			},
			opts:   func(t testing.TB, o *Options) { o.StrictKinds = true },
			checks: []Check{CheckKind},
			want:   []string{"fleet/clusters/prod-eu/extra.yaml:1: Widget/w: unknown kind example.com/v1 Widget: no API type to check it against"},
		},
		{
			name: "duplicate: two files define one object",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["clusters/prod-eu/extra.yaml"] = []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n")
			},
			checks: []Check{CheckDuplicate},
			want:   []string{"fleet/clusters/prod-eu/extra.yaml:1: Namespace/shop: Namespace shop is also defined at fleet/apps/prod-eu/shop/_project/namespace-shop.yaml:2 (Kustomization flux-system/project-shop)"},
		},
		// Secrets.
		{name: "secret: clean", checks: []Check{CheckSecret}, want: []string{}},
		{
			name: "secret: plain Secret, SOPS Secret",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["clusters/prod-eu/secret.yaml"] = []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: shop\nstringData:\n  password: hunter2\n" +
					"---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: t\n  namespace: shop\ndata:\n  password: ENC[AES256_GCM,data:abc=,type:str]\nsops:\n  version: 3.9.0\n")
			},
			checks: []Check{CheckSecret},
			want:   []string{"fleet/clusters/prod-eu/secret.yaml:7: Secret/s: stringData.password: Secret value in plain text; encrypt the Secret with SOPS, or create it outside Git"},
		},
		{
			name: "secret: a Secret in a List that a path builds",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["apps/prod-eu/shop/orders/api/list.yaml"] = []byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n" +
					"  metadata:\n    name: s\n  stringData:\n    password: hunter2\n")
				edit(t, f, "apps/prod-eu/shop/orders/api/kustomization.yaml", "resources:\n", "resources:\n- list.yaml\n")
			},
			checks: []Check{CheckSecret},
			want:   []string{"fleet/apps/prod-eu/shop/orders/api/list.yaml:9: Secret/s: stringData.password: Secret value in plain text; encrypt the Secret with SOPS, or create it outside Git"},
		},
		{
			name: "secret: literal credential env var",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, myAPI, "        - name: APP_ENV\n", "        - name: API_TOKEN\n          value: s3cr3t-value\n        - name: DB_PASSWORD\n          value: $(FW_DATABASE_URL_PASSWORD)\n        - name: APP_ENV\n")
			},
			checks: []Check{CheckSecret},
			want:   []string{"fleet/" + myAPI + ":44: Deployment/my-api-api: spec.template.spec.containers[0].env[2].value: env var \"API_TOKEN\" looks like a credential and has a literal value; use valueFrom.secretKeyRef"},
		},
		{
			name: "secret: tokens and passwords in text",
			mutate: func(t testing.TB, f map[string][]byte) {
				f["clusters/prod-eu/notes.txt"] = []byte("token ghp_" + strings.Repeat("a1B2", 9) + "\n" +
					"url: postgresql://app:hunter2@db:5432/app\nok: postgresql://app:$(DB_PASSWORD)@db:5432/app\n" +
					"-----BEGIN RSA PRIVATE KEY-----\nAKIA" + strings.Repeat("Z", 16) + "\n")
			},
			checks: []Check{CheckSecret},
			want: []string{
				"fleet/clusters/prod-eu/notes.txt:1: a GitHub token (gh?_…) in plain text; keep credentials in a Secret encrypted with SOPS, or outside Git",
				"fleet/clusters/prod-eu/notes.txt:2: a password in a postgresql:// URL in plain text (postgresql://app:****@…); reference it as $(VAR) from a secretKeyRef env var",
				"fleet/clusters/prod-eu/notes.txt:4: a PEM private key in plain text; keep credentials in a Secret encrypted with SOPS, or outside Git",
				"fleet/clusters/prod-eu/notes.txt:5: an AWS access key id (AKIA…) in plain text; keep credentials in a Secret encrypted with SOPS, or outside Git",
			},
		},
		// Policy.
		{
			name: "policy: latest tag and no digest",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersAPI, "orders-api:2.4.1", "orders-api:latest")
			},
			checks: []Check{CheckForbidLatest},
			want:   []string{"fleet/" + ordersAPI + ":34: Deployment/orders-api: spec.template.spec.containers[0].image: image myorg/orders-api:latest uses the mutable latest tag; pin a version (policy forbid_latest)"},
		},
		{
			name: "policy: pinned images pass",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersAPI, "orders-api:2.4.1", "orders-api:2.4.1@sha256:"+strings.Repeat("ab", 32))
			},
			checks: []Check{CheckRequireDigests, CheckForbidLatest},
			want: []string{
				"fleet/apps/prod-eu/my-project/my-api/api/deployment-my-api-api.yaml:46: warning: Deployment/my-api-api: spec.template.spec.containers[0].image: image myorg/my-api:v1.2.0 is not pinned by digest (policy require_digests)",
				"fleet/apps/prod-eu/shop/analytics/etl/deployment-analytics-etl.yaml:46: warning: Deployment/analytics-etl: spec.template.spec.containers[0].image: image myorg/analytics-etl:0.9.0 is not pinned by digest (policy require_digests)",
				"fleet/" + myAPI + ":50: warning: Deployment/my-api-api: spec.template.spec.containers[0].image: image myorg/my-api:v1.2.0 is not pinned by digest (policy require_digests)",
				"fleet/apps/prod-eu/shop/orders/worker/deployment-orders-worker.yaml:43: warning: Deployment/orders-worker: spec.template.spec.containers[0].image: image myorg/orders-worker:2.4.1 is not pinned by digest (policy require_digests)",
				"fleet/apps/prod-eu/shop/reports/web/deployment-reports-web.yaml:46: warning: Deployment/reports-web: spec.template.spec.containers[0].image: image myorg/reports:1.0.3 is not pinned by digest (policy require_digests)",
				"fleet/apps/prod-eu/shop/storefront/web/deployment-storefront-web.yaml:41: warning: Deployment/storefront-web: spec.template.spec.containers[0].image: image nginxinc/nginx-unprivileged:1.27 is not pinned by digest (policy require_digests)",
			},
		},
		{
			name:   "policy: requests, probes as errors",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, ordersAPI, "            cpu: 50m\n", "") },
			opts: func(t testing.TB, o *Options) {
				repo, _ := exampleFleet(t)
				plat := repo.Platform
				plat.Policy = &spec.Policy{RequireRequests: "error", RequireProbes: "off"}
				o.Platform = &plat
			},
			checks: []Check{CheckRequireRequests, CheckRequireProbes},
			want:   []string{"fleet/" + ordersAPI + ":56: Deployment/orders-api: spec.template.spec.containers[0].resources.requests: container \"api\" sets no cpu request (policy require_requests)"},
		},
		{
			name: "policy: Ingress without TLS",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, "apps/prod-eu/shop/orders/api/ingress-orders-api.yaml", "  - hosts:\n    - orders.example.com\n", "  - hosts:\n    - other.example.com\n")
			},
			checks: []Check{CheckRequireTLS},
			want:   []string{"fleet/apps/prod-eu/shop/orders/api/ingress-orders-api.yaml:20: warning: Ingress/orders-api: spec.rules[0].host: host orders.example.com is not in any spec.tls hosts (policy require_tls)"},
		},
		{
			name: "policy: production replicas",
			opts: func(t testing.TB, o *Options) {
				repo, _ := exampleFleet(t)
				plat := repo.Platform
				plat.Policy = &spec.Policy{ProductionReplicas: "error"}
				o.Platform = &plat
			},
			checks: []Check{CheckProductionReplicas},
			want: []string{
				"fleet/apps/prod-eu/shop/analytics/etl/deployment-analytics-etl.yaml:16: Deployment/analytics-etl: spec.replicas: runs 1 replica(s) on production cluster prod-eu and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)",
				"fleet/" + ordersAPI + ":16: Deployment/orders-api: spec.replicas: runs 1 replica(s) on production cluster prod-eu and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)",
				"fleet/apps/prod-eu/shop/orders/worker/deployment-orders-worker.yaml:16: Deployment/orders-worker: spec.replicas: runs 1 replica(s) on production cluster prod-eu and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)",
			},
		},
		{
			name: "policy: not production",
			opts: func(t testing.TB, o *Options) {
				repo, _ := exampleFleet(t)
				plat := repo.Platform
				plat.Clusters = []spec.Cluster{{Name: "prod-eu", Path: "clusters/prod-eu"}}
				o.Platform = &plat
			},
			checks: []Check{CheckProductionReplicas},
			want:   []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, files := exampleFleet(t)
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			var opts Options
			if tt.opts != nil {
				tt.opts(t, &opts)
			}
			rep := verifyFleet(t, files, opts)
			if diff := cmp.Diff(tt.want, lines(rep, tt.checks...)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func withApps(t testing.TB, o *Options) {
	repo, _ := exampleFleet(t)
	o.Apps = &Apps{Repo: repo}
}

var _ = filepath.Join
var _ = strings.Contains
