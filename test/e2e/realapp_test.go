package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/probe"
)

// The real-application journey: an app whose migration job runs before its
// api, whose store keeps its data on a persistent volume, and whose api
// reads a config file and is checked by a gRPC probe, applied by Flux's
// controllers on the journey's cluster.
//
// What is real and what kwok stands in for: kube-controller-manager runs
// the Job, StatefulSet, ReplicaSet and PersistentVolume controllers, the
// scheduler places pods, and Flux applies and health-checks the objects.
// kwok's nodes run no containers: its pod-ready stage marks every
// scheduled pod Ready (no probe is executed, so the test checks the gRPC
// probe is in the applied pod spec), and its pod-complete stage ends a
// Job's pods with success, after which the Job controller marks the Job
// Complete, which is what kustomize-controller's health check waits for.
// No storage provisioner runs: the test creates the PersistentVolume a
// cluster's provisioner would, and the PV controller binds the
// StatefulSet's claim to it.

const realApp = "store"

var realAppSpec = `name: store
components:
  - name: migrate
    type: job
    workload_spec:
      image: {{IMAGE}}
      command: [/app, migrate, --to=1]
      backoff_limit: 1
      active_deadline_seconds: 120
  - name: db
    type: workload
    workload_spec:
      image: {{IMAGE}}
      ports: [{name: kv, port: 6379}]
      volumes:
        - {name: data, mount_path: /data, size: 1Gi}
      probes:
        readiness: {tcp: {port: 6379}}
  - name: api
    type: workload
    depends_on: [migrate]
    workload_spec:
      image: {{IMAGE}}
      ports: [{name: grpc, port: 50051, service_port: 5000}]
      env:
        - {name: DB_ADDR, export_ref: {component: db, export_key: address}}
      files:
        - {path: /etc/api/config.yaml, content: "db: $(DB_ADDR)\nlevel: info\n"}
      probes:
        readiness: {grpc: {port: 50051}, period_seconds: 5}
`

func TestRealAppJourney(t *testing.T) {
	// Flux's default flags, as users run it: the api's Kustomization,
	// which depends on the migration job's, retries after 30s.
	j := newJourney(t)
	// The image the app runs, in the journey's registry, so render pins
	// it by digest as it does for any image it does not build.
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	imageRef := j.reg.Host() + "/real/store:1.0.0"
	ref, err := name.ParseReference(imageRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	// This journey's fleet gives each component its own source, and the
	// project one for its apps' Flux objects: render pushes each
	// component's folder and the project's folder of Flux files as OCI
	// artifacts to the journey's registry (plain HTTP on loopback), and
	// Flux pulls them by digest. The fleet has them from its first commit,
	// as a fleet started with fleet.artifacts does: nothing moves
	// (TestMigrationToComponentSources moves a running fleet).
	j.edit("platform.yaml", "  path: fleet\n", "  path: fleet\n  artifacts: {repository: "+j.reg.Host()+"/fleet-artifacts, insecure: true}\n")
	appFile := filepath.Join(j.apps, "apps", project, realApp, "app.yaml")
	if err := os.MkdirAll(filepath.Dir(appFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(appFile, []byte(strings.ReplaceAll(realAppSpec, "{{IMAGE}}", imageRef)), 0o644); err != nil {
		t.Fatal(err)
	}
	j.gitIn(j.apps, "add", "-A")
	j.gitIn(j.apps, "commit", "-q", "-m", "Add store: a migration job, a stateful db and a gRPC api")
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	if r := j.must(j.apps, "render", "validate", "."); !strings.Contains(r.stderr, "1 app(s), 3 component(s): valid") {
		t.Fatalf("render validate: %s", r)
	}
	fleetPR := j.renderFleetPR()
	fleetDir := j.cloneFleet(prBranch)
	j.clusterUp()
	if vr := j.must(fleetDir, "verify", "--apps", j.apps, "--kubeconfig", j.c.Kubeconfig, "fleet"); !strings.Contains(vr.stdout, "0 error(s)") {
		t.Errorf("verify: %s", vr)
	}
	rev1 := j.mergeFleet(fleetPR)
	fleet := j.fleetTree("main")
	for p, want := range map[string]bool{
		"fleet/apps/" + clusterName + "/" + project + "/_flux/" + realApp + ".yaml":    true,
		"fleet/clusters/" + clusterName + "/apps/" + project + "-" + realApp + ".yaml": false,
		"fleet/clusters/" + clusterName + "/projects/" + project + ".yaml":             true,
	} {
		if _, ok := fleet[p]; ok != want {
			t.Errorf("the fleet has %s: %v, want %v", p, ok, want)
		}
	}
	if !strings.Contains(fleet["fleet/clusters/"+clusterName+"/projects/"+project+".yaml"], "name: project-"+project+"\n") {
		t.Errorf("the project's file holds no source of its own:\n%s", fleet["fleet/clusters/"+clusterName+"/projects/"+project+".yaml"])
	}
	j.pass(1, "render validated and rendered the app, its Flux objects in the project's source; verify passed with live checks")

	// What a storage provisioner would offer: a volume the claim binds to.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "journey-store-data"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/journey/store"}},
		},
	}
	if err := j.c.Client.Create(j.ctx, pv); err != nil {
		t.Fatal(err)
	}
	// The webhook, fed by notification-controller, follows the app through
	// its project's source: events of the component Kustomizations, which
	// read artifacts, map to the fleet commit that pinned them.
	j.ing = startIngress(t, j.c.Client, host)
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments").Between(1, 40).
		JSONField("task", "deploy").JSONField("environment", project+"/"+realApp).JSONField("auto_merge", false)
	j.gh.Expect("POST", "/repos/"+fleetRepo+"/deployments/*/statuses").Between(1, 200)
	j.startWebhook()
	j.forwardEvents()
	j.bootstrapFlux()
	kss := []string{project + "-" + realApp + "-migrate", project + "-" + realApp + "-db", project + "-" + realApp + "-api"}
	j.eventually("Flux applies the app", 3*time.Minute, func() error {
		for _, k := range append([]string{"fleet-" + clusterName, "project-" + project}, kss...) {
			if err := j.kustomizationReady(k, rev1); err != nil {
				return err
			}
		}
		return nil
	})
	// The project's Kustomization applied the app's Flux objects, not the
	// root.
	for _, k := range kss {
		for _, o := range []client.Object{&kustomizev1.Kustomization{}, &sourcev1.OCIRepository{}} {
			if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: kustomizationNS(k), Name: k}, o); err != nil {
				t.Fatal(err)
			}
			if owner := o.GetLabels()[kustomizeName]; owner != "project-"+project {
				t.Errorf("%T %s is applied by Kustomization %q, want project-%s", o, k, owner, project)
			}
		}
	}
	job1 := j.completedJob()
	var api appsv1.Deployment
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: realApp + "-api"}, &api); err != nil {
		t.Fatal(err)
	}
	if done := job1.Status.CompletionTime; done == nil || api.CreationTimestamp.Before(done) {
		t.Errorf("the api was created at %s, before its migration job completed (%v)", api.CreationTimestamp, done)
	}
	j.pass(2, fmt.Sprintf("Flux ran Job %s to completion, then applied the api (created %s, job completed %s)", job1.Name, api.CreationTimestamp.Format(time.RFC3339), job1.Status.CompletionTime.Format(time.RFC3339)))

	// The store: a StatefulSet whose replica runs on its own bound claim.
	var sts appsv1.StatefulSet
	j.eventually("the store runs on its claim", time.Minute, func() error {
		if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: realApp + "-db"}, &sts); err != nil {
			return err
		}
		if sts.Status.ReadyReplicas != 1 {
			return fmt.Errorf("StatefulSet %s: %d ready replicas", sts.Name, sts.Status.ReadyReplicas)
		}
		var pvc corev1.PersistentVolumeClaim
		if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: "data-" + realApp + "-db-0"}, &pvc); err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName != pv.Name {
			return fmt.Errorf("claim %s: %s on %q", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
		}
		return nil
	})
	if sts.Spec.ServiceName != realApp+"-db-headless" {
		t.Errorf("the StatefulSet's service is %q", sts.Spec.ServiceName)
	}
	j.pass(3, "the store runs as StatefulSet "+sts.Name+" on claim data-"+realApp+"-db-0, bound to the volume offered")

	// The api: rolled out with its config file mounted from the ConfigMap
	// and the gRPC probe on its container.
	d := j.waitRollout(realApp+"-api", 1)
	var cm corev1.ConfigMap
	if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: generate.FilesConfigMapName(realApp, "api")}, &cm); err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["etc_api_config.yaml"]; got != "db: $(DB_ADDR)\nlevel: info\n" {
		t.Errorf("config file in the cluster = %q", got)
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	if p := ctr.ReadinessProbe; p == nil || p.GRPC == nil || p.GRPC.Port != 50051 {
		t.Errorf("readiness probe = %+v, want gRPC on 50051", p)
	}
	mounted := false
	for _, m := range ctr.VolumeMounts {
		mounted = mounted || m.MountPath == "/etc/api/config.yaml" && m.ReadOnly && m.SubPath == "etc_api_config.yaml"
	}
	if !mounted {
		t.Errorf("config file not mounted: %+v", ctr.VolumeMounts)
	}
	for _, e := range ctr.Env {
		if e.Name == "DB_ADDR" && e.Value != realApp+"-db."+project+".svc.cluster.local:6379" {
			t.Errorf("DB_ADDR = %q", e.Value)
		}
	}
	sum1 := d.Spec.Template.Annotations[layout.AnnotationFilesSum]
	j.pass(4, "the api rolled out with its config file mounted read-only from "+cm.Name+" and a gRPC readiness probe")
	j.checkWebhookRunning(realAppPath, rev1, 1)
	j.pass(5, "the webhook shows the deployment of "+rev1+" running, its sync and readiness checks passed; GitHub's deployment status is success")

	// A new migration and a changed config file: a new Job runs (the old
	// one is pruned) and the api's pods roll.
	j.edit(filepath.ToSlash(filepath.Join("apps", project, realApp, "app.yaml")), "--to=1", "--to=2", "level: info", "level: debug")
	j.gitIn(j.apps, "commit", "-q", "-am", "Migrate to 2; debug logging")
	j.gitIn(j.apps, "push", "-q", "origin", "main")
	rev2 := j.mergeFleet(j.renderFleetPR())
	j.eventually("Flux applies the change", 3*time.Minute, func() error {
		for _, k := range kss {
			if err := j.kustomizationReady(k, rev2); err != nil {
				return err
			}
		}
		return j.gone(&batchv1.Job{}, project, job1.Name)
	})
	job2 := j.completedJob()
	if job2.Name == job1.Name {
		t.Errorf("the changed job kept its name %s", job1.Name)
	}
	d = j.waitRollout(realApp+"-api", 1)
	if sum2 := d.Spec.Template.Annotations[layout.AnnotationFilesSum]; sum2 == sum1 || sum2 == "" {
		t.Errorf("the files checksum did not change with the file: %q → %q", sum1, sum2)
	}
	j.checkWebhookRunning(realAppPath, rev2, 2)
	j.pass(6, fmt.Sprintf("the changed job ran as %s and %s was pruned; the config change rolled the api; the webhook shows the new deployment running", job2.Name, job1.Name))
}

// realAppPath is the real application's resource in the webhook's API.
const realAppPath = "/api/v1/apps/" + project + "/" + realApp

// checkWebhookRunning waits until the webhook shows the deployment of the
// fleet commit rev of the app at path running, checks that its sync and
// readiness checks passed (the app has no Ingress: reachability is
// skipped), that its history holds n deployments, newest rev, and that
// GitHub's deployment status of rev is success.
func (j *journey) checkWebhookRunning(path, rev string, n int) {
	j.t.Helper()
	ds := j.waitAppPhase(path, rev, "running", 3*time.Minute)
	want := map[string]probe.State{probe.CheckSync: probe.StatePassed, probe.CheckReadiness: probe.StatePassed, probe.CheckReachability: probe.StateSkipped}
	got := map[string]probe.State{}
	for _, c := range ds.Checks {
		got[c.Name] = c.State
		if c.State != want[c.Name] {
			j.t.Errorf("check %s of %s = %s (%s), want %s", c.Name, rev, c.State, c.Message, want[c.Name])
		}
	}
	if len(got) != len(want) {
		j.t.Errorf("the deployment of %s ran checks %v, want %v", rev, got, want)
	}
	if h := j.appHistory(path); len(h) != n || h[0].Revision != rev {
		j.t.Errorf("history = %+v, want %d deployments, the newest of %s", h, n, rev)
	}
	j.githubDeployment(rev, "success")
}

// completedJob returns the app's one migration Job once it is Complete.
func (j *journey) completedJob() *batchv1.Job {
	j.t.Helper()
	var done *batchv1.Job
	j.eventually("the migration job completes", 2*time.Minute, func() error {
		var list batchv1.JobList
		if err := j.c.Client.List(j.ctx, &list, client.InNamespace(project), client.MatchingLabels{layout.LabelInstance: realApp + "-migrate"}); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d migration Jobs", len(list.Items))
		}
		job := &list.Items[0]
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				done = job
				return nil
			}
		}
		return fmt.Errorf("Job %s: not complete (%+v)", job.Name, job.Status)
	})
	return done
}

// waitRollout waits until the named Deployment of the project runs want
// replicas of its latest template.
func (j *journey) waitRollout(name string, want int32) *appsv1.Deployment {
	j.t.Helper()
	var d appsv1.Deployment
	j.eventually("Deployment "+name+" rolls out", 2*time.Minute, func() error {
		if err := j.c.Client.Get(j.ctx, client.ObjectKey{Namespace: project, Name: name}, &d); err != nil {
			return err
		}
		return rolledOut(&d, want)
	})
	return &d
}
