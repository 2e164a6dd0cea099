package review_test

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
)

// storeGolden is the fleet render writes for an app "store" of project shop
// (generate's golden of testdata/specs/store) with a database (a StatefulSet
// with a claim template and a headless Service), an api (a Deployment with
// an init container, a native sidecar, a ConfigMap of files, a Service with
// a gRPC and a UDP port, a ServiceAccount and a PodDisruptionBudget), a
// migration job and a nightly cron job.
const storeGolden = "../generate/testdata/fleets/store"

// The store app's files.
const (
	storeDir = "apps/prod-eu/shop/store/"
	dbSTS    = storeDir + "db/statefulset-store-db.yaml"
	dbSvc    = storeDir + "db/service-store-db.yaml"
	apiDep   = storeDir + "api/deployment-store-api.yaml"
	apiCM    = storeDir + "api/configmap-store-api-files.yaml"
	apiSvc   = storeDir + "api/service-store-api.yaml"
	apiKust  = storeDir + "api/kustomization.yaml"
	jobOld   = storeDir + "migrate/job-store-migrate-0857721d.yaml"
	jobKust  = storeDir + "migrate/kustomization.yaml"
	cronJob  = storeDir + "nightly/cronjob-store-nightly.yaml"
)

func storeFleet(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for p, s := range golden.ReadFiles(t, storeGolden) {
		if strings.HasPrefix(p, storeDir) {
			out[p] = []byte(s)
		}
	}
	return out
}

// change returns a copy of files with old replaced by new in file p,
// failing when old is not there.
func change(t *testing.T, files map[string][]byte, p, old, new string) map[string][]byte {
	t.Helper()
	if !strings.Contains(string(files[p]), old) {
		t.Fatalf("%s does not contain %q", p, old)
	}
	out := maps.Clone(files)
	out[p] = []byte(strings.Replace(string(files[p]), old, new, 1))
	return out
}

// rename moves file from to to, replacing old with new in its text.
func rename(t *testing.T, files map[string][]byte, from, to, old, new string) map[string][]byte {
	t.Helper()
	out := change(t, files, from, old, new)
	out[to] = out[from]
	delete(out, from)
	return out
}

func remove(files map[string][]byte, prefix string) map[string][]byte {
	out := maps.Clone(files)
	for p := range out {
		if strings.HasPrefix(p, prefix) {
			delete(out, p)
		}
	}
	return out
}

// jobRerun is the fleet after the migration's template changed: render
// names the Job after its new template's hash.
func jobRerun(t *testing.T, f map[string][]byte) map[string][]byte {
	f = rename(t, f, jobOld, storeDir+"migrate/job-store-migrate-9f8e7d6c.yaml", "name: store-migrate-0857721d", "name: store-migrate-9f8e7d6c")
	f = change(t, f, storeDir+"migrate/job-store-migrate-9f8e7d6c.yaml", "myorg/store-api:1.0.0", "myorg/store-api:1.1.0")
	return change(t, f, jobKust, "job-store-migrate-0857721d.yaml", "job-store-migrate-9f8e7d6c.yaml")
}

func TestAppDangers(t *testing.T) {
	t.Parallel()
	const sts = "StatefulSet `shop/store-db`"
	tests := []struct {
		name       string
		base, head func(t *testing.T, f map[string][]byte) map[string][]byte
		want       []string
	}{
		{name: "claim template resized", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, dbSTS, "storage: 10Gi", "storage: 20Gi")
		}, want: []string{sts + ": spec.volumeClaimTemplates is immutable and the apply will be rejected: claim `data` changes (size 10Gi → 20Gi). " +
			"Existing claims keep their data and size: to grow one, resize the claims themselves (when the storage class allows expansion); anything else needs the StatefulSet recreated and the data moved"}},
		{name: "claim template added", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, dbSTS, "  volumeClaimTemplates:\n", "  volumeClaimTemplates:\n  - metadata:\n      name: wal\n    spec:\n      resources:\n        requests:\n          storage: 1Gi\n")
		}, want: []string{sts + ": spec.volumeClaimTemplates is immutable and the apply will be rejected: claim `wal` is added. " +
			"Existing claims keep their data and size: to grow one, resize the claims themselves (when the storage class allows expansion); anything else needs the StatefulSet recreated and the data moved"}},
		{name: "service name of a StatefulSet", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, dbSTS, "serviceName: store-db", "serviceName: store-db-headless")
		}, want: []string{sts + ": spec.serviceName is immutable (store-db → store-db-headless); the apply will be rejected (the StatefulSet must be recreated)"}},
		{name: "StatefulSet becomes a Deployment", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			f = rename(t, f, dbSTS, storeDir+"db/deployment-store-db.yaml", "kind: StatefulSet", "kind: Deployment")
			return change(t, f, storeDir+"db/kustomization.yaml", "statefulset-store-db.yaml", "deployment-store-db.yaml")
		}, want: []string{"Deployment `shop/store-db` replaces StatefulSet `shop/store-db`: every pod is recreated without the StatefulSet's volume claims; " +
			"its claims of `data` are kept (the volumes retain them): delete them by hand once their data is no longer needed"}},
		{name: "StatefulSet removed, claims kept", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return remove(f, storeDir+"db/")
		}, want: []string{"StatefulSet `shop/store-db` is removed: Flux prunes it; its claims of `data` are kept (the volumes retain them): delete them by hand once their data is no longer needed"}},
		{name: "retain false, then scaled down", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			f = change(t, f, dbSTS, "whenScaled: Retain", "whenScaled: Delete")
			return change(t, f, dbSTS, "replicas: 3", "replicas: 1")
		}, want: []string{sts + " scales from 3 to 1 replicas and its volumes do not retain claims (retain: false): the claims of replicas 1–2 are deleted with their data"}},
		{name: "app removed", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return remove(f, storeDir)
		}, want: []string{
			"app `prod-eu/shop/store` is removed: Flux prunes every object it created",
			"StatefulSet `shop/store-db` is removed: Flux prunes it; its claims of `data` are kept (the volumes retain them): delete them by hand once their data is no longer needed",
		}},
		{name: "StatefulSet with retain false removed", base: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, dbSTS, "whenDeleted: Retain", "whenDeleted: Delete")
		}, head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return remove(f, storeDir+"db/")
		}, want: []string{"StatefulSet `shop/store-db` is removed: Flux prunes it; its claims of `data` are deleted with it (retain: false): their data is lost"}},
		{name: "retain false from now on", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, dbSTS, "whenDeleted: Retain", "whenDeleted: Delete")
		}, want: []string{sts + " no longer retains its claims (retain: false): from now on, deleting it or the app deletes their data (informational)"}},
		{name: "ServiceAccount removed while pods run as it", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			f = change(t, f, apiKust, "- serviceaccount-store-api.yaml\n", "")
			delete(f, storeDir+"api/serviceaccount-store-api.yaml")
			return f
		}, want: []string{"ServiceAccount `shop/store-api` is removed but Deployment `shop/store-api` still runs as it: its new pods are refused until the ServiceAccount exists"}},
		{name: "disruption budget that blocks drains", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, storeDir+"api/poddisruptionbudget-store-api.yaml", "maxUnavailable: 1", "minAvailable: 2")
		}, want: []string{"PodDisruptionBudget `shop/store-api` allows no pod of Deployment `shop/store-api` (2 replica(s)) to be evicted: node drains and cluster upgrades wait until it is changed"}},
		{name: "claim added", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			f = maps.Clone(f)
			f[storeDir+"api/persistentvolumeclaim-store-api-cache.yaml"] = []byte(pvc("5Gi", "fast"))
			return f
		}, want: []string{"kind `PersistentVolumeClaim` is new to the fleet (no object of the base has it): `shop/store-api-cache`"}},
		{name: "headless Service gets a cluster IP", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, dbSvc, "  clusterIP: None\n", "")
		}, want: []string{"Service `shop/store-db` is no longer headless: spec.clusterIP is immutable, the apply will be rejected (the Service must be deleted and recreated)"}},
		{name: "LoadBalancer dropped", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, apiSvc, "type: LoadBalancer", "type: ClusterIP")
		}, want: []string{"Service `shop/store-api`: type changes from LoadBalancer to ClusterIP: its external load balancer and address are released, and clients using that address lose access"}},
		{name: "UDP port removed", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, apiSvc, "  - name: statsd\n    port: 8125\n    protocol: UDP\n    targetPort: statsd\n", "")
		}, want: []string{"Service `shop/store-api`: port 8125/UDP is removed"}},
		{name: "workload selector", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, apiDep, "    matchLabels:\n      app.kubernetes.io/instance: store-api\n", "    matchLabels:\n      app.kubernetes.io/instance: store-api2\n")
		}, want: []string{"Deployment `shop/store-api`: spec.selector is immutable; the apply will be rejected (the workload must be recreated)"}},
		{name: "job re-run", head: jobRerun, want: []string{
			"Job `shop/store-migrate-9f8e7d6c` runs again: its template changed, so it has a new name (was `store-migrate-0857721d`); the old Job is pruned",
		}},
		{name: "job template changed in place", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, jobOld, "- up\n", "- up\n        - --verbose\n")
		}, want: []string{"Job `shop/store-migrate-0857721d`: its pod template changes under the same name; a Job's template is immutable, so the apply will be rejected"}},
		{name: "cron schedule", head: func(t *testing.T, f map[string][]byte) map[string][]byte {
			return change(t, f, cronJob, `schedule: "0 3 * * *"`, `schedule: "30 4 * * *"`)
		}, want: []string{"CronJob `shop/store-nightly`: the schedule changes from `0 3 * * *` to `30 4 * * *` (informational: the next runs follow the new schedule)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := storeFleet(t)
			if tt.base != nil {
				base = tt.base(t, base)
			}
			c := review.Build(review.Input{Base: base, Head: tt.head(t, base)})
			if diff := cmp.Diff(tt.want, c.Danger); diff != "" {
				t.Errorf("danger (-want +got):\n%s", diff)
			}
		})
	}
}

func pvc(size, class string) string {
	return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: store-api-cache\n  namespace: shop\n  labels:\n    fleetwright.io/app: store\n" +
		"spec:\n  accessModes:\n  - ReadWriteOnce\n  resources:\n    requests:\n      storage: " + size + "\n  storageClassName: " + class + "\n"
}

func TestClaimChanges(t *testing.T) {
	t.Parallel()
	const p = storeDir + "api/persistentvolumeclaim-store-api-cache.yaml"
	base := storeFleet(t)
	base[p] = []byte(pvc("5Gi", "fast"))
	tests := []struct {
		name, size, class string
		want              []string
	}{
		{"shrinks", "2Gi", "fast", []string{"PersistentVolumeClaim `shop/store-api-cache` shrinks from 5Gi to 2Gi: a claim cannot shrink, the apply will be rejected"}},
		{"grows", "8Gi", "fast", []string{"PersistentVolumeClaim `shop/store-api-cache` grows from 5Gi to 8Gi: only if its storage class allows volume expansion (else the apply is rejected)"}},
		{"new class", "5Gi", "slow", []string{"PersistentVolumeClaim `shop/store-api-cache`: storage class fast → slow change; a bound claim's spec is immutable apart from its size, the apply will be rejected"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			head := maps.Clone(base)
			head[p] = []byte(pvc(tt.size, tt.class))
			c := review.Build(review.Input{Base: base, Head: head})
			if diff := cmp.Diff(tt.want, c.Danger); diff != "" {
				t.Errorf("danger (-want +got):\n%s", diff)
			}
		})
	}
	c := review.Build(review.Input{Base: base, Head: remove(base, p)})
	if diff := cmp.Diff([]string{"volume claim `shop/store-api-cache` is removed: its data is lost"}, c.Danger); diff != "" {
		t.Errorf("removed claim (-want +got):\n%s", diff)
	}
	// A retained claim (retain: true) is not pruned: its data stays.
	kept := maps.Clone(base)
	kept[p] = []byte(strings.Replace(pvc("5Gi", "fast"), "  labels:\n", "  annotations:\n    "+layout.PruneDisabledLine+"\n  labels:\n", 1))
	c = review.Build(review.Input{Base: kept, Head: remove(kept, p)})
	want := "volume claim `shop/store-api-cache` leaves the fleet: Flux keeps it and its data (`" + layout.PruneDisabledLine + "`); delete it by hand once its data is no longer needed"
	if diff := cmp.Diff([]string{want}, c.Danger); diff != "" {
		t.Errorf("removed retained claim (-want +got):\n%s", diff)
	}
}

// TestAppComments keeps whole comments of the new kinds as golden files.
func TestAppComments(t *testing.T) {
	t.Parallel()
	base := storeFleet(t)
	tests := []struct {
		name       string
		base, head func(t *testing.T) map[string][]byte
	}{
		{name: "apps-first-deploy", base: func(t *testing.T) map[string][]byte { return map[string][]byte{} }, head: storeFleet},
		{name: "apps-images-and-resources", head: func(t *testing.T) map[string][]byte {
			f := change(t, base, apiDep, "image: busybox:1.36", "image: busybox:1.37")
			f = change(t, f, apiDep, "image: envoyproxy/envoy:v1.31.0", "image: envoyproxy/envoy:v1.32.1")
			f = change(t, f, apiDep, "cpu: 50m\n            memory: 64Mi", "cpu: 150m\n            memory: 64Mi")
			f = change(t, f, dbSTS, "replicas: 3", "replicas: 4")
			return jobRerun(t, f)
		}},
		{name: "apps-config-files", head: func(t *testing.T) map[string][]byte {
			f := change(t, base, apiCM, `etc_api_config.yaml: "level: info\nlisten`, `etc_api_config.yaml: "level: debug\nlisten`)
			f = change(t, f, apiCM, `  etc_nginx_nginx.conf:`, `  extra.ini: "[a]\nb = 1\n"`+"\n  etc_nginx_nginx.conf:")
			return change(t, f, apiDep, "files-checksum: b5224d49f03ed42d20a286a54322b6e84811a6c58f12fb1929284ca8f9a31e4b", "files-checksum: 5a6b7c8d")
		}},
		{name: "apps-patch", head: func(t *testing.T) map[string][]byte {
			return change(t, base, apiKust, "- serviceaccount-store-api.yaml\n", "- serviceaccount-store-api.yaml\npatches:\n"+
				"- patch: \"- op: add\\n  path: /spec/template/spec/hostAliases\\n  value:\\n  - ip: 10.0.0.1\\n    hostnames: [legacy]\\n\"\n  target:\n    kind: Deployment\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := base
			if tt.base != nil {
				b = tt.base(t)
			}
			c := review.Build(review.Input{Base: b, Head: tt.head(t)})
			golden.File(t, filepath.Join("testdata", tt.name+".md"), c.Body)
		})
	}
}

// TestPatchedDangers: the danger list judges objects as Flux applies them,
// after the patches of their folder's kustomization.yaml.
func TestPatchedDangers(t *testing.T) {
	t.Parallel()
	base := storeFleet(t)
	patch := func(text string) func(t *testing.T) map[string][]byte {
		return func(t *testing.T) map[string][]byte {
			return change(t, base, jobKust, "- job-store-migrate-0857721d.yaml\n", "- job-store-migrate-0857721d.yaml\npatches:\n- patch: "+text+"\n  target:\n    kind: Job\n")
		}
	}
	tests := []struct {
		name string
		head func(t *testing.T) map[string][]byte
		want []string
	}{
		{"a patch changes a Job's template", patch(`"- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: myorg/store-api:2.0.0\n"`),
			[]string{"Job `shop/store-migrate-0857721d`: its pod template changes under the same name; a Job's template is immutable, so the apply will be rejected"}},
		{"a patch that does not apply", patch(`"- op: replace\n  path: /spec/nothing/here\n  value: 1\n"`),
			[]string{"`apps/prod-eu/shop/store/migrate/kustomization.yaml` does not build, so Flux cannot apply it: kustomize build apps/prod-eu/shop/store/migrate: " +
				"replace operation does not apply: doc is missing path: /spec/nothing/here: missing value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := review.Build(review.Input{Base: base, Head: tt.head(t)})
			if diff := cmp.Diff(tt.want, c.Danger); diff != "" {
				t.Errorf("danger (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigFileLabels: a file's diff is labelled with the path the
// workload sees it at, through the volume's items and a directory mount.
func TestConfigFileLabels(t *testing.T) {
	t.Parallel()
	base := storeFleet(t)
	base = change(t, base, apiDep, "        - mountPath: /etc/api/config.yaml\n          name: fleetwright-files\n          readOnly: true\n          subPath: etc_api_config.yaml\n", "        - mountPath: /etc/app\n          name: fleetwright-files\n")
	base = change(t, base, apiDep, "          - key: etc_api_config.yaml\n            path: etc_api_config.yaml\n", "          - key: etc_api_config.yaml\n            path: conf/app.yaml\n")
	head := change(t, base, apiCM, `level: info`, `level: warn`)
	c := review.Build(review.Input{Base: base, Head: head})
	for _, want := range []string{"--- /etc/app/conf/app.yaml\n+++ /etc/app/conf/app.yaml\n", "-level: info\n+level: warn\n"} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, c.Body)
		}
	}
}

// TestJobGraph: jobs and cron jobs have their own shape in the graph, and a
// cron job shows its schedule.
func TestJobGraph(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{"apps/shop/store/app.yaml": []byte(`name: store
components:
  - {name: migrate, type: job, workload_spec: {image: myorg/api:2.0.0, command: [./migrate]}}
  - {name: api, type: workload, depends_on: [migrate], workload_spec: {image: myorg/api:2.0.0, port: 8080}}
  - {name: nightly, type: cronjob, workload_spec: {image: myorg/api:2.0.0, schedule: "0 3 * * *"}}
`)}
	repo, _ := loadOnly(t, files)
	head := map[string][]byte{"apps/default/shop/store/api/x.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: shop}\n")}
	c := review.Build(review.Input{Base: map[string][]byte{}, Head: head, HeadRepo: repo})
	for _, want := range []string{`c_migrate[/"migrate<br/>job"/]`, `c_nightly[/"nightly<br/>cronjob 0 3 * * *"/]`, "c_migrate --> c_api"} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("the graph lacks %s:\n%s", want, c.Body)
		}
	}
}
