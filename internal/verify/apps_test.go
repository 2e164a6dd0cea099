package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// storeGolden is the fleet render writes for an app "store" of project shop
// (generate's golden of testdata/specs/store): a database StatefulSet with
// a claim template and a headless Service, an api Deployment with an init
// container, a native sidecar, a ConfigMap of files, a Service with a gRPC
// and a UDP port, a ServiceAccount and a PodDisruptionBudget, a migration
// Job and a nightly CronJob. Its app's files are verified as part of the
// examples' fleet.
const storeGolden = "../generate/testdata/fleets/store"

const (
	storeDir  = "apps/prod-eu/shop/store/"
	storeSTS  = storeDir + "db/statefulset-store-db.yaml"
	storeDep  = storeDir + "api/deployment-store-api.yaml"
	storeCM   = storeDir + "api/configmap-store-api-files.yaml"
	storeSvc  = storeDir + "api/service-store-api.yaml"
	storePDB  = storeDir + "api/poddisruptionbudget-store-api.yaml"
	storeKust = storeDir + "api/kustomization.yaml"
	storeJob  = storeDir + "migrate/job-store-migrate-0857721d.yaml"
	storeCron = storeDir + "nightly/cronjob-store-nightly.yaml"
)

// storeFleet returns the examples' fleet with the store app.
func storeFleet(t testing.TB) map[string][]byte {
	t.Helper()
	_, files := exampleFleet(t)
	for p, s := range golden.ReadFiles(t, storeGolden) {
		if strings.HasPrefix(p, storeDir) || p == "clusters/prod-eu/apps/shop-store.yaml" {
			files[p] = []byte(s)
		}
	}
	return files
}

// notPolicy are the checks that do not depend on the platform's policy.
var notPolicy = []Check{CheckYAML, CheckBuild, CheckDeps, CheckAPI, CheckKind, CheckDuplicate, CheckSecret}

// storePatch adds patches to the api's kustomization.yaml, as render
// writes them.
func storePatch(t testing.TB, f map[string][]byte, patches string) {
	edit(t, f, storeKust, "- serviceaccount-store-api.yaml\n", "- serviceaccount-store-api.yaml\npatches:\n"+patches)
}

func TestStoreAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(t testing.TB, f map[string][]byte)
		want   []string
	}{
		{name: "clean"},
		{name: "patch adds an unknown field", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, "- patch: \"- op: add\\n  path: /spec/template/spec/hostAliasess\\n  value: []\\n\"\n  target:\n    kind: Deployment\n")
		}, want: []string{"fleet/" + storeKust + ":11: Deployment/store-api: spec.template.spec.hostAliasess: unknown field (after this patch)"}},
		{name: "patch removes a required field", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, "- patch: \"- op: remove\\n  path: /spec/template/spec/containers/0/image\\n\"\n  target:\n    kind: Deployment\n    name: store-api\n")
		}, want: []string{"fleet/" + storeKust + ":11: Deployment/store-api: spec.template.spec.containers[0].image: required field is missing (after this patch)"}},
		{name: "strategic-merge patch sets both budgets", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, "- patch: \"apiVersion: policy/v1\\nkind: PodDisruptionBudget\\nmetadata:\\n  name: store-api\\n  namespace: shop\\nspec:\\n  minAvailable: 1\\n\"\n")
		}, want: []string{"fleet/" + storeKust + ":11: PodDisruptionBudget/store-api: spec: minAvailable and maxUnavailable cannot both be set (after this patch)"}},
		{name: "patch replaces a field the type does not have", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, "- patch: \"- op: replace\\n  path: /spec/nothing\\n  value: 1\\n\"\n  target:\n    kind: Deployment\n")
		}, want: []string{
			"fleet/" + storeKust + ":11: Deployment/store-api: spec.nothing: unknown field (after this patch)",
		}},
		{name: "StatefulSet claim template without storage or access modes", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeSTS, "      accessModes:\n      - ReadWriteOnce\n      resources:\n        requests:\n          storage: 10Gi\n", "      resources: {}\n")
		}, want: []string{
			"fleet/" + storeSTS + ":63: StatefulSet/store-db: spec.volumeClaimTemplates[0].spec.accessModes: at least one access mode is required",
			"fleet/" + storeSTS + ":64: StatefulSet/store-db: spec.volumeClaimTemplates[0].spec.resources.requests.storage: required field is missing",
		}},
		{name: "StatefulSet mounts a volume it does not have", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeSTS, "          name: data\n", "          name: dataa\n")
		}, want: []string{
			"fleet/" + storeSTS + `:54: StatefulSet/store-db: spec.template.spec.containers[0].volumeMounts[0].name: no volume named "dataa" in the pod (volumes: data)`,
		}},
		{name: "StatefulSet retention policy", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeSTS, "whenDeleted: Retain", "whenDeleted: Keep")
		}, want: []string{
			"fleet/" + storeSTS + `:17: StatefulSet/store-db: spec.persistentVolumeClaimRetentionPolicy.whenDeleted: unsupported value "Keep": must be "Retain" or "Delete"`,
		}},
		{name: "Job restart policy", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeJob, "      restartPolicy: Never\n", "")
		}, want: []string{
			"fleet/" + storeJob + `:27: Job/store-migrate-0857721d: spec.template.spec.restartPolicy: required: a Job's pods need restartPolicy "OnFailure" or "Never"`,
		}},
		{name: "CronJob schedule and restart policy", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeCron, `schedule: "0 3 * * *"`, `schedule: "0 25 * * *"`)
			edit(t, f, storeCron, "restartPolicy: OnFailure", "restartPolicy: Always")
		}, want: []string{
			"fleet/" + storeCron + `:46: CronJob/store-nightly: spec.jobTemplate.spec.template.spec.restartPolicy: unsupported value "Always": must be "OnFailure" or "Never"`,
			"fleet/" + storeCron + `:47: CronJob/store-nightly: spec.schedule: "0 25 * * *" is not a valid cron schedule: end of range (25) above maximum (23): 25`,
		}},
		{name: "CronJob time zone in the schedule", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeCron, `schedule: "0 3 * * *"`, `schedule: "CRON_TZ=Europe/Paris 0 3 * * *"`)
		}, want: []string{
			"fleet/" + storeCron + ":47: CronJob/store-nightly: spec.schedule: cannot use TZ or CRON_TZ in the schedule: set spec.timeZone",
		}},
		{name: "init container with a probe, sidecar with one", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeDep, "        name: wait\n", "        name: wait\n        readinessProbe:\n          exec:\n            command: [\"true\"]\n")
			edit(t, f, storeDep, "        name: proxy\n", "        name: proxy\n        readinessProbe:\n          tcpSocket:\n            port: admin\n        ports:\n        - containerPort: 9901\n          name: admin\n")
		}, want: []string{
			"fleet/" + storeDep + ":68: Deployment/store-api: spec.template.spec.initContainers[0].readinessProbe: an init container may not have a readinessProbe: it runs to completion (only a sidecar, restartPolicy Always, may)",
		}},
		{name: "probe handlers and ports", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeDep, "        readinessProbe:\n          grpc:\n            port: 50051\n",
				"        livenessProbe:\n          grpc:\n            port: 50051\n          successThreshold: 2\n          tcpSocket:\n            port: 50051\n"+
					"        readinessProbe:\n          httpGet:\n            path: /\n            port: http\n        startupProbe:\n          periodSeconds: 1\n")
		}, want: []string{
			"fleet/" + storeDep + ":46: Deployment/store-api: spec.template.spec.containers[0].livenessProbe.grpc: a probe has exactly one handler, not tcpSocket and grpc",
			"fleet/" + storeDep + ":48: Deployment/store-api: spec.template.spec.containers[0].livenessProbe.successThreshold: must be 1 for a livenessProbe",
			"fleet/" + storeDep + `:54: Deployment/store-api: spec.template.spec.containers[0].readinessProbe.httpGet.port: the container declares no port named "http"`,
			"fleet/" + storeDep + ":55: Deployment/store-api: spec.template.spec.containers[0].startupProbe: a probe needs one handler: exec, httpGet, tcpSocket or grpc",
		}},
		{name: "container ports and names", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeDep, "          name: statsd\n          protocol: UDP\n", "          name: grpc\n          protocol: QUIC\n")
			edit(t, f, storeDep, "        name: proxy\n", "        name: api\n")
		}, want: []string{
			"fleet/" + storeDep + `:37: Deployment/store-api: spec.template.spec.containers[0].name: duplicate container name "api": names are unique across containers and init containers`,
			"fleet/" + storeDep + `:43: Deployment/store-api: spec.template.spec.containers[0].ports[1].name: duplicate port name "grpc"`,
			"fleet/" + storeDep + `:44: Deployment/store-api: spec.template.spec.containers[0].ports[1].protocol: unsupported value "QUIC": must be "TCP", "UDP" or "SCTP"`,
		}},
		{name: "Service ports", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeSvc, "  - name: statsd\n    port: 8125\n    protocol: UDP\n", "  - port: 5000\n    protocol: TCP\n")
			edit(t, f, storeSvc, "  type: LoadBalancer\n", "  clusterIP: None\n  type: LoadBalancer\n")
		}, want: []string{
			"fleet/" + storeSvc + ":21: Service/store-api: spec.ports[1]: duplicate port 5000/TCP",
			"fleet/" + storeSvc + ":21: Service/store-api: spec.ports[1].name: required when a Service has more than one port",
			"fleet/" + storeSvc + ":27: Service/store-api: spec.clusterIP: may be None (headless) only for type ClusterIP, not LoadBalancer",
		}},
		{name: "PodDisruptionBudget values", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storePDB, "maxUnavailable: 1", "maxUnavailable: half")
		}, want: []string{
			"fleet/" + storePDB + `:16: PodDisruptionBudget/store-api: spec.maxUnavailable: "half" must be a number of pods or a percentage from 0% to 100%`,
		}},
		{name: "ConfigMap keys", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeCM, "  etc_nginx_nginx.conf:", "  etc/nginx.conf:")
		}, want: []string{
			"fleet/" + storeCM + `:5: ConfigMap/store-api-files: data.etc/nginx.conf: "etc/nginx.conf" is not a valid ConfigMap key: at most 253 letters, digits, '-', '_' and '.' (a file name, without '/')`,
		}},
		{name: "ServiceAccount field", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeDir+"api/serviceaccount-store-api.yaml", "kind: ServiceAccount\n", "kind: ServiceAccount\nautomountServiceAccountToken: \"no\"\n")
		}, want: []string{
			"fleet/" + storeDir + "api/serviceaccount-store-api.yaml:4: ServiceAccount/store-api: automountServiceAccountToken: must be true or false, not a string",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := storeFleet(t)
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			rep := verifyFleet(t, files, Options{})
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, lines(rep, notPolicy...)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPatchedFolderIsKustomized: a component folder whose kustomization.yaml
// has patches is built by kustomize, never assembled from its files, so
// every check sees the objects as patched.
func TestPatchedFolderIsKustomized(t *testing.T) {
	t.Parallel()
	files := storeFleet(t)
	plain := verifyFleet(t, files, Options{})
	storePatch(t, files, "- patch: \"- op: add\\n  path: /spec/template/spec/hostAliases\\n  value: [{ip: 10.0.0.1, hostnames: [legacy]}]\\n\"\n  target:\n    kind: Deployment\n")
	patched := verifyFleet(t, files, Options{})
	if plain.Stats.Kustomized != 0 || patched.Stats.Kustomized != 1 {
		t.Errorf("kustomized paths: %d without patches, %d with (want 0 and 1)", plain.Stats.Kustomized, patched.Stats.Kustomized)
	}
	if got := lines(patched, notPolicy...); len(got) != 0 {
		t.Errorf("a valid patch gives findings: %q", got)
	}
}

// TestStorePolicy: the policy checks cover every container of every pod
// template (init containers, sidecars, StatefulSets, Jobs, CronJobs);
// probes are required of what runs as long as the pod only, and any
// handler (grpc, tcp, exec, http) counts.
func TestStorePolicy(t *testing.T) {
	t.Parallel()
	repo, _ := exampleFleet(t)
	plat := repo.Platform
	plat.Policy = &spec.Policy{RequireRequests: "error", RequireProbes: "error", RequireDigests: "off", ProductionReplicas: "off"}
	files := map[string][]byte{}
	for p, b := range storeFleet(t) {
		if strings.HasPrefix(p, storeDir) || !strings.HasPrefix(p, "apps/") {
			files[p] = b
		}
	}
	edit(t, files, storeDep, "        readinessProbe:\n          grpc:\n            port: 50051\n",
		"        livenessProbe:\n          tcpSocket:\n            port: grpc\n        readinessProbe:\n          grpc:\n            port: 50051\n")
	edit(t, files, storeSTS, "        readinessProbe:\n", "        livenessProbe:\n          httpGet:\n            path: /\n            port: 5432\n        readinessProbe:\n")
	edit(t, files, storeDep, "            cpu: 500m\n", "")
	rep := verifyFleet(t, files, Options{Platform: &plat})
	want := []string{
		"fleet/" + storeDep + `:72: Deployment/store-api: spec.template.spec.initContainers[0].resources.requests: init container "wait" sets no cpu request (policy require_requests)`,
		"fleet/" + storeDep + `:74: Deployment/store-api: spec.template.spec.initContainers[1]: sidecar "proxy" has no readinessProbe or livenessProbe (policy require_probes)`,
		"fleet/" + storeCron + `:45: CronJob/store-nightly: spec.jobTemplate.spec.template.spec.containers[0].resources.requests: container "nightly" sets no cpu or memory request (policy require_requests)`,
	}
	if diff := cmp.Diff(want, lines(rep, CheckRequireRequests, CheckRequireProbes)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestStoreSecrets: the secret gates read the files of ConfigMaps, the env
// of every container (init containers and sidecars too), and what patches
// set; names ending in _FILE are paths; $$(NAME) is the literal $(NAME).
func TestStoreSecrets(t *testing.T) {
	t.Parallel()
	const proxy = "        name: proxy\n"
	tests := []struct {
		name   string
		mutate func(t testing.TB, f map[string][]byte)
		want   []string
	}{
		{name: "clean"},
		{name: "credentials in config files", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeCM, `etc_api_config.yaml: "level: info\n`, `app.env: "export DB_PASSWORD=hunter2\nLOG=debug\n"`+"\n"+`  etc_api_config.yaml: "level: info\ndatabase:\n  password: hunter2\n  password_file: /run/secrets/db\n  token_ttl: 300\n  apiKey: ${API_KEY}\n`)
			edit(t, f, storeCM, `  etc_nginx_nginx.conf:`, `  settings.json: "{\"clientSecret\": \"s3cr3t-v4lue\", \"enabled\": true}\n"`+"\n  etc_nginx_nginx.conf:")
		}, want: []string{
			"fleet/" + storeCM + `:4: ConfigMap/store-api-files: data.app.env: file "app.env", line 1: "DB_PASSWORD" holds a credential in plain text, and ConfigMaps are not encrypted; ` +
				"reference an environment variable set from a Secret (valueFrom.secretKeyRef) if the program expands one, or mount the value from a Secret",
			"fleet/" + storeCM + `:5: ConfigMap/store-api-files: data.etc_api_config.yaml: file "etc_api_config.yaml", line 3: "password" holds a credential in plain text, and ConfigMaps are not encrypted; ` +
				"reference an environment variable set from a Secret (valueFrom.secretKeyRef) if the program expands one, or mount the value from a Secret",
			"fleet/" + storeCM + `:6: ConfigMap/store-api-files: data.settings.json: file "settings.json", line 1: "clientSecret" holds a credential in plain text, and ConfigMaps are not encrypted; ` +
				"reference an environment variable set from a Secret (valueFrom.secretKeyRef) if the program expands one, or mount the value from a Secret",
		}},
		{name: "env of a sidecar and an init container; _FILE is a path", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeDep, proxy, proxy+"        env:\n        - name: MYSQL_ROOT_PASSWORD_FILE\n          value: /run/secrets/root\n        - name: ADMIN_TOKEN\n          value: s3cr3t-v4lue\n")
			edit(t, f, storeDep, "        name: wait\n", "        name: wait\n        env:\n        - name: PGPASSWORD\n          value: hunter2\n")
		}, want: []string{
			"fleet/" + storeDep + `:70: Deployment/store-api: spec.template.spec.initContainers[0].env[0].value: env var "PGPASSWORD" looks like a credential and has a literal value; use valueFrom.secretKeyRef`,
			"fleet/" + storeDep + `:81: Deployment/store-api: spec.template.spec.initContainers[1].env[1].value: env var "ADMIN_TOKEN" looks like a credential and has a literal value; use valueFrom.secretKeyRef`,
		}},
		{name: "a patch sets a credential", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, "- patch: \"- op: add\\n  path: /spec/template/spec/containers/0/env\\n  value:\\n  - name: DB_PASSWORD\\n    value: hunter2\\n\"\n  target:\n    kind: Deployment\n")
		}, want: []string{
			"fleet/" + storeKust + `:11: Deployment/store-api: spec.template.spec.containers[0].env[0].value: env var "DB_PASSWORD" looks like a credential and has a literal value; use valueFrom.secretKeyRef (after this patch)`,
		}},
		{name: "a patch that applies to nothing still may not carry a credential", mutate: func(t testing.TB, f map[string][]byte) {
			storePatch(t, f, "- patch: \"- op: add\\n  path: /spec/template/spec/containers/0/env\\n  value:\\n  - name: DB_PASSWORD\\n    value: hunter2\\n\"\n  target:\n    kind: Deployment\n    name: other\n")
		}, want: []string{
			"fleet/" + storeKust + `:11: this patch sets "DB_PASSWORD" to a literal credential; patches may not carry secret values: reference a Secret (valueFrom.secretKeyRef)`,
		}},
		{name: "escaped and unexpanded references", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeDep, "        name: api\n", "        name: api\n        env:\n"+
				"        - name: PG_PASS\n          valueFrom:\n            secretKeyRef: {name: pg, key: password}\n"+
				"        - name: DATABASE_URL\n          value: postgres://app:$(PG_PASS)@db:5432/app\n"+
				"        - name: CACHE_URL\n          value: redis://app:$$(REDIS_PASS)@cache:6379\n"+
				"        - name: QUEUE_URL\n          value: amqp://app:$(MQ_PASS)@mq:5672\n"+
				"        - name: MQ_PASS\n          valueFrom:\n            secretKeyRef: {name: mq, key: password}\n"+
				"        - name: API_TOKEN\n          value: $$(TOKEN)\n")
		}, want: []string{
			"fleet/" + storeDep + ":45: warning: the password of this redis:// URL is the literal text $(REDIS_PASS), not the value of REDIS_PASS: $$( is not expanded. " +
				"To pass the value, set REDIS_PASS from a Secret (valueFrom.secretKeyRef; in app.yaml, an env entry with secret_ref) before this entry in the same container, and write $(REDIS_PASS)",
			"fleet/" + storeDep + ":47: warning: Deployment/store-api: spec.template.spec.containers[0].env[3].value: the reference to MQ_PASS is not expanded: MQ_PASS is defined after it " +
				`in container "api", and Kubernetes expands only env vars defined earlier in the same container, so the value keeps the reference as text`,
			"fleet/" + storeDep + `:52: warning: Deployment/store-api: spec.template.spec.containers[0].env[5].value: env var "API_TOKEN" is the literal text $(TOKEN), not the value of TOKEN: $$( is not expanded. ` +
				"Set TOKEN from a Secret (valueFrom.secretKeyRef) before this entry and write $(TOKEN)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := storeFleet(t)
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			rep := verifyFleet(t, files, Options{})
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, lines(rep, CheckSecret, CheckEnvRef)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range rep.Findings {
				for _, secret := range []string{"hunter2", "s3cr3t-v4lue"} {
					if strings.Contains(f.String(), secret) {
						t.Errorf("a finding shows a secret: %s", f.String())
					}
				}
			}
		})
	}
}

// FuzzAPIRules checks that the per-kind rules never panic on any object,
// however malformed, and name a field for every problem they report.
func FuzzAPIRules(f *testing.F) {
	for _, p := range []string{storeSTS, storeDep, storeCM, storeSvc, storePDB, storeJob, storeCron} {
		b, err := os.ReadFile(filepath.Join(storeGolden, p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("spec: {template: {spec: {containers: [{ports: [{name: 1}], readinessProbe: [], volumeMounts: [x]}]}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := yamlx.Parse(data)
		if err != nil || len(docs) == 0 || docs[0].Root == nil {
			return
		}
		for kind := range kinds {
			for _, m := range missingRequired(kind, docs[0].Root) {
				if m.msg == "" {
					t.Errorf("%s: a problem without a message at %q", kind, m.field)
				}
			}
		}
	})
}

// TestPodSecurity: pod templates are evaluated with Pod Security
// Admission's own checks, at the level the namespace's labels enforce, else
// the platform's policy.pod_security.
func TestPodSecurity(t *testing.T) {
	t.Parallel()
	const ns = "clusters/prod-eu/projects/shop.yaml"
	// A container that meets the restricted standard.
	const hardened = "        securityContext:\n          allowPrivilegeEscalation: false\n          capabilities:\n            drop: [ALL]\n          runAsNonRoot: true\n          seccompProfile:\n            type: RuntimeDefault\n"
	tests := []struct {
		name   string
		level  string
		mutate func(t testing.TB, f map[string][]byte)
		want   []string
	}{
		{name: "no level: nothing checked"},
		{name: "restricted from the platform", level: "restricted", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, storeJob, "        name: migrate\n", "        name: migrate\n"+hardened)
			edit(t, f, storeCron, "          restartPolicy: OnFailure\n", "          restartPolicy: OnFailure\n          securityContext:\n            runAsNonRoot: true\n            seccompProfile: {type: RuntimeDefault}\n")
			edit(t, f, storeCron, "            name: nightly\n", "            name: nightly\n            securityContext:\n              allowPrivilegeEscalation: false\n              capabilities: {drop: [ALL]}\n")
		}, want: []string{
			"fleet/" + storeDep + ":34: Deployment/store-api: spec.template.spec: its pods violate PodSecurity \"restricted:latest\", which platform.yaml's policy.pod_security enforces, and would be refused: " +
				`allowPrivilegeEscalation != false (containers "wait", "proxy", "api" must set securityContext.allowPrivilegeEscalation=false), ` +
				`unrestricted capabilities (containers "wait", "proxy", "api" must set securityContext.capabilities.drop=["ALL"]), ` +
				`runAsNonRoot != true (pod or containers "wait", "proxy", "api" must set securityContext.runAsNonRoot=true), ` +
				`seccompProfile (pod or containers "wait", "proxy", "api" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
			"fleet/" + storeSTS + ":35: StatefulSet/store-db: spec.template.spec: its pods violate PodSecurity \"restricted:latest\", which platform.yaml's policy.pod_security enforces, and would be refused: " +
				`allowPrivilegeEscalation != false (container "db" must set securityContext.allowPrivilegeEscalation=false), ` +
				`unrestricted capabilities (container "db" must set securityContext.capabilities.drop=["ALL"]), ` +
				`runAsNonRoot != true (pod or container "db" must set securityContext.runAsNonRoot=true), ` +
				`seccompProfile (pod or container "db" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
		}},
		{name: "baseline from the namespace's labels", mutate: func(t testing.TB, f map[string][]byte) {
			edit(t, f, ns, "  labels:\n", "  labels:\n    pod-security.kubernetes.io/enforce: baseline\n")
			edit(t, f, storeDep, "        name: proxy\n", "        name: proxy\n        securityContext:\n          privileged: true\n")
		}, want: []string{"fleet/" + storeDep + `:34: Deployment/store-api: spec.template.spec: its pods violate PodSecurity "baseline:latest", which namespace shop enforces, and would be refused: ` +
			`privileged (container "proxy" must not set securityContext.privileged=true)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := storeFleet(t)
			// The level comes from the case alone, not from the examples.
			var kept []string
			for _, l := range strings.SplitAfter(string(files[ns]), "\n") {
				if !strings.Contains(l, "pod-security.kubernetes.io/") {
					kept = append(kept, l)
				}
			}
			files[ns] = []byte(strings.Join(kept, ""))
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			repo, _ := exampleFleet(t)
			plat := repo.Platform
			plat.Policy = &spec.Policy{PodSecurity: tt.level}
			rep := verifyFleet(t, files, Options{Platform: &plat})
			want := tt.want
			if want == nil {
				want = []string{}
			}
			got := []string{}
			for _, l := range lines(rep, CheckPodSecurity) {
				if strings.Contains(l, "/shop/store/") { // the examples' own pods are not hardened
					got = append(got, l)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
