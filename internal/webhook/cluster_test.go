package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/testenv"
	"github.com/fleetwright/fleetwright/internal/tlstest"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// app is one app of the test cluster: its Kustomization, Deployment and Ingress.
type clusterApp struct {
	// c is the client of the cluster the app is in.
	c                   client.Client
	project, name, host string
	k                   *kustomizev1.Kustomization
	d                   *appsv1.Deployment
}

func newClusterApp(t *testing.T, project, fluxNS, name string, timeout time.Duration, withLabels bool) *clusterApp {
	t.Helper()
	return newClusterAppOn(t, env.Client, project, fluxNS, name, timeout, withLabels)
}

// newClusterAppOn is newClusterApp in the cluster c reaches.
func newClusterAppOn(t *testing.T, c client.Client, project, fluxNS, name string, timeout time.Duration, withLabels bool) *clusterApp {
	t.Helper()
	labels := map[string]string{layout.LabelApp: name, layout.LabelProject: project, layout.LabelComponent: "web"}
	a := &clusterApp{c: c, project: project, name: name, host: name + "." + project + ".example.test"}
	a.k = &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: project + "-" + name + "-web", Namespace: fluxNS,
			Annotations: map[string]string{layout.EventAnnotationPrefix + layout.EventApp: name, layout.EventAnnotationPrefix + layout.EventProject: project, layout.EventAnnotationPrefix + layout.EventComponent: "web",
				layout.EventAnnotationPrefix + layout.EventSpecRevision: fixtureSpec}},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Timeout: &metav1.Duration{Duration: timeout},
			Path: "./apps/prod/" + project + "/" + name + "/web", Prune: true, Wait: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"},
		},
	}
	if withLabels {
		a.k.Labels = labels
		a.k.Annotations = nil
	}
	sel := map[string]string{"app.kubernetes.io/instance": name + "-web"}
	a.d = &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-web", Namespace: project, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.test/web:v1"}}}}},
	}
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-web", Namespace: project,
			Labels: map[string]string{layout.LabelApp: name, layout.LabelProject: project, layout.LabelComponent: "web", layout.LabelManagedBy: layout.ManagedBy}},
		Spec: networkingv1.IngressSpec{
			TLS: []networkingv1.IngressTLS{{Hosts: []string{a.host}, SecretName: name + "-web-tls"}},
			Rules: []networkingv1.IngressRule{{Host: a.host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: name + "-web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
		},
	}
	for _, o := range []client.Object{a.k, a.d, ing} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func (a *clusterApp) setSynced(t *testing.T, revision string) {
	t.Helper()
	setKustomizationStatusOn(t, a.c, a.k, revision, revision, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
		Reason: meta.ReconciliationSucceededReason, Message: "Applied revision: " + revision})
}

// setApplied writes a Kustomization's status as kustomize-controller does
// once it applied revision and its health checks passed.
func setApplied(t testing.TB, k *kustomizev1.Kustomization, revision string) {
	t.Helper()
	setKustomizationStatus(t, k, revision, revision, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
		Reason: meta.ReconciliationSucceededReason, Message: "Applied revision: " + revision})
}

// setKustomizationStatus writes a Kustomization's status: its applied and
// attempted revisions and its Ready condition.
func setKustomizationStatus(t testing.TB, k *kustomizev1.Kustomization, applied, attempted string, ready metav1.Condition) {
	t.Helper()
	setKustomizationStatusOn(t, env.Client, k, applied, attempted, ready)
}

// setKustomizationStatusOn is setKustomizationStatus in the cluster c reaches.
func setKustomizationStatusOn(t testing.TB, c client.Client, k *kustomizev1.Kustomization, applied, attempted string, ready metav1.Condition) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	ready.ObservedGeneration, ready.LastTransitionTime = k.Generation, metav1.Now()
	k.Status.ObservedGeneration = k.Generation
	k.Status.LastAppliedRevision, k.Status.LastAttemptedRevision = applied, attempted
	k.Status.Conditions = []metav1.Condition{ready}
	if err := c.Status().Update(t.Context(), k); err != nil {
		t.Fatal(err)
	}
}

func (a *clusterApp) setReplicas(t *testing.T, updated, available int32, conds ...appsv1.DeploymentCondition) {
	t.Helper()
	d := a.d
	if err := a.c.Get(t.Context(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: updated,
		ReadyReplicas: available, AvailableReplicas: available, Conditions: conds}
	if err := a.c.Status().Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
}

// tlsSite serves HTTPS on loopback with a certificate for host from a test CA.
func tlsSite(t *testing.T, host string) (*x509.CertPool, string) {
	t.Helper()
	ca := tlstest.NewCA(t, "test CA")
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, host)}, MinVersion: tls.VersionTLS12}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ca.Pool(), ts.Listener.Addr().String()
}

func clusterEnv(t testing.TB, fluxNS string, pool *x509.CertPool, addr string, mods ...func(*Config)) *testEnv {
	t.Helper()
	return clusterEnvAt(t, fluxNS, pool, addr, func(c *Config, _ string) {
		for _, m := range mods {
			m(c)
		}
	})
}

// clusterEnvAt is clusterEnv with mod told the server's base URL.
func clusterEnvAt(t testing.TB, fluxNS string, pool *x509.CertPool, addr string, mod func(c *Config, base string)) *testEnv {
	t.Helper()
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	// The test's TLS listener is on loopback.
	prober := &probe.Prober{Client: env.Client, RootCAs: pool, AllowPrivate: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	return newTestEnvAt(t, func(c *Config, base string) {
		c.Cluster, c.Kube, c.Prober, c.FluxNamespace = env.Client, kube, prober, fluxNS
		c.Resolver = NewClusterResolver(env.Client, nil, time.Minute)
		c.RecheckInterval = 100 * time.Millisecond
		c.Backoff = probe.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}
		mod(c, base)
	}, nil)
}

// TestClusterPhaseWalk drives an app through deploying → running → degraded
// → running by writing Kustomization and Deployment status to a real API server.
func TestClusterPhaseWalk(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	a := newClusterApp(t, project, fluxNS, "api", 5*time.Minute, false)
	pool, addr := tlsSite(t, a.host)
	e := clusterEnv(t, fluxNS, pool, addr)

	e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "api"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
	got := e.waitPhase(project, "api", store.PhaseDeploying)
	if !strings.Contains(got.Message, "waiting for kustomize-controller to observe the latest spec") {
		t.Errorf("deploying message = %q", got.Message)
	}
	a.setSynced(t, rev1)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var ds DeployStatus
		e.api("/api/v1/apps/"+project+"/api/deploy-status", &ds)
		if ds.Checks[0].State == probe.StatePassed {
			if ds.Phase != store.PhaseDeploying || ds.Checks[1].State.Green() {
				t.Errorf("after sync: %+v", ds)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.setReplicas(t, 2, 2)
	got = e.waitPhase(project, "api", store.PhaseRunning)
	if got.LiveURL != "https://"+a.host+"/" {
		t.Errorf("live URL = %q", got.LiveURL)
	}
	var st AppStatus
	e.api("/api/v1/apps/"+project+"/api", &st)
	if len(st.Components) != 1 || st.Components[0].Health != store.HealthHealthy || len(st.Components[0].Workloads) != 1 {
		t.Errorf("components = %+v", st.Components)
	}

	a.setReplicas(t, 2, 1)
	got = e.waitPhase(project, "api", store.PhaseDegraded)
	if !strings.Contains(got.Message, "2/2 updated, 1/2 available") {
		t.Errorf("degraded message = %q", got.Message)
	}
	a.setReplicas(t, 2, 2)
	e.waitPhase(project, "api", store.PhaseRunning)
	want := []string{"->pending", "pending->deploying", "deploying->running", "running->degraded", "degraded->running"}
	if diff := cmp.Diff(want, e.walk(project, "api")); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	var ds DeployStatus
	e.api("/api/v1/apps/"+project+"/api/deploy-status", &ds)
	reach := ds.Checks[2]
	if reach.State != probe.StatePassed || len(reach.Endpoints) != 1 || reach.Endpoints[0].TLS == nil || reach.Endpoints[0].TLS.DaysToExpiry < 89 {
		t.Errorf("reachability = %+v", reach)
	}
}

// TestClusterTimeoutFails checks that the webhook fails a deployment on its
// own timeout, and that Flux's verdict on the revision, when it comes later,
// replaces the timeout as the reason.
func TestClusterTimeoutFails(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	a := newClusterApp(t, project, fluxNS, "slow", time.Second, false)
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1")
	e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "slow"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
	got := e.waitPhase(project, "slow", store.PhaseFailed)
	if !strings.Contains(got.Message, "timeout (1s) passed before every check was green: sync:") {
		t.Errorf("message = %q", got.Message)
	}
	const fluxReason = "health check failed after 1s: timeout waiting for: [Deployment/x/slow-web status: 'InProgress']"
	setKustomizationStatus(t, a.k, "", rev1, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: meta.HealthCheckFailedReason, Message: fluxReason})
	e.mustPost(fixture(t, "kustomization-healthcheckfailed", withApp(project, "slow"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
	want := "sync check failed: " + project + "-slow-web: HealthCheckFailed: " + fluxReason
	got = e.waitMessage(project, "slow", want)
	if got.Phase != store.PhaseFailed {
		t.Errorf("app = %+v, want failed", got)
	}
	if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->failed"}, e.walk(project, "slow")); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
}

// TestClusterSpecRevision checks that the spec revision comes from the
// cluster once the Kustomization that applies the app's has applied the
// revision, over what the first event said, and that the sync check waits
// for that.
func TestClusterSpecRevision(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	a := newClusterApp(t, project, fluxNS, "api", 5*time.Minute, false)
	pool, addr := tlsSite(t, a.host)
	e := clusterEnv(t, fluxNS, pool, addr)
	const specNew = "0123456789abcdef0123456789abcdef01234567"

	root := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: fluxNS},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./clusters/prod", Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"}},
	}
	if err := env.Client.Create(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	setApplied(t, root, "main@sha1:0000000000000000000000000000000000000000")
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(a.k), a.k); err != nil {
		t.Fatal(err)
	}
	a.k.Labels = map[string]string{layout.AppliedByNameLabel: root.Name, layout.AppliedByNamespaceLabel: fluxNS}
	if err := env.Client.Update(t.Context(), a.k); err != nil {
		t.Fatal(err)
	}
	// The app's Kustomization applied the revision before the root did:
	// its event still names the previous spec revision (fixtureSpec).
	a.setSynced(t, rev1)
	a.setReplicas(t, 2, 2)
	e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "api"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
	got := e.waitPhase(project, "api", store.PhaseDeploying)
	if want := "sync: " + project + "-api-web: waiting for Kustomization " + fluxNS + "/fleet, which applies it, to apply " + rev1; !strings.HasPrefix(got.Message, want) {
		t.Errorf("message = %q, want it to start with %q", got.Message, want)
	}
	if got.SpecRevision != fixtureSpec {
		t.Errorf("spec revision before the root applied = %q, want the event's %q", got.SpecRevision, fixtureSpec)
	}

	// The root applies the revision, and with it the new annotation.
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(a.k), a.k); err != nil {
		t.Fatal(err)
	}
	a.k.Annotations[layout.EventAnnotationPrefix+layout.EventSpecRevision] = specNew
	if err := env.Client.Update(t.Context(), a.k); err != nil {
		t.Fatal(err)
	}
	setApplied(t, root, rev1)
	got = e.waitPhase(project, "api", store.PhaseRunning)
	var page struct{ Deployments []DeploymentView }
	e.api("/api/v1/apps/"+project+"/api/deployments", &page)
	if got.SpecRevision != specNew || len(page.Deployments) != 1 || page.Deployments[0].SpecRevision != specNew {
		t.Errorf("app spec revision %q, deployments %+v; want %s", got.SpecRevision, page.Deployments, specNew)
	}
	// A later event with the old annotation changes nothing.
	e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "api"), inNamespace(e.srv.cfg.FluxNamespace), withMessage("Reconciliation finished in 2s, next run in 10m0s")), 200)
	if d, err := e.st.Deployment(t.Context(), got.DeploymentID); err != nil || d.SpecRevision != specNew {
		t.Errorf("deployment after a later event = %+v, %v", d, err)
	}
}

// TestClusterDeletedApp checks that an app whose Kustomizations are gone is
// deleted, from running (GitHub hears inactive) and from failed, and that an
// app whose Kustomizations were never seen is not.
func TestClusterDeletedApp(t *testing.T) {
	t.Parallel()
	// running walks an app to running at rev1, with its one GitHub
	// deployment, and returns what the webhook will say once the app is
	// deleted. GitHub then expects that deployment to turn inactive.
	running := func(t *testing.T) (*clusterApp, *testEnv, *fakeGitHub, string) {
		t.Helper()
		project, fluxNS := env.Namespace(t), env.Namespace(t)
		a := newClusterApp(t, project, fluxNS, "api", 5*time.Minute, false)
		pool, addr := tlsSite(t, a.host)
		deleted := "Flux pruned the app: no Flux Kustomization of " + project + "/api in " + project + " or " + fluxNS
		fake := newFakeGitHub(t, []expectation{
			{"POST", "/repos/acme/fleet/deployments", map[string]any{
				"ref": commitOf(rev1), "task": "deploy", "auto_merge": false, "required_contexts": []any{},
				"environment": project + "/api", "description": project + "/api at " + rev1,
				"payload": map[string]any{"project": project, "app": "api", "revision": rev1, "spec_revision": fixtureSpec},
			}},
			{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "in_progress", "description": "deploying: readiness pending"}},
			{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "success", "environment_url": "https://" + a.host + "/",
				"description": "running: sync passed, readiness passed, reachability passed"}},
			{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "inactive", "description": truncate("deleted: "+deleted, 140)}},
		})
		e := clusterEnv(t, fluxNS, pool, addr, func(c *Config) {
			c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo}
		})
		a.setSynced(t, rev1)
		a.setReplicas(t, 2, 2)
		e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "api"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
		e.waitPhase(project, "api", store.PhaseRunning)
		return a, e, fake, deleted
	}
	t.Run("running", func(t *testing.T) {
		t.Parallel()
		a, e, fake, deleted := running(t)
		project := a.project

		// Flux prunes the app: its Kustomization goes, and says what it deleted.
		if err := env.Client.Delete(t.Context(), a.k); err != nil {
			t.Fatal(err)
		}
		e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "api"), inNamespace(e.srv.cfg.FluxNamespace),
			withMessage("Deployment/"+project+"/api-web deleted\nIngress/"+project+"/api-web deleted")), 200)
		got := e.waitPhase(project, "api", store.PhaseDeleted)
		if got.Message != deleted || got.LiveURL != "" || got.SpecRevision != fixtureSpec {
			t.Errorf("app = %+v, want message %q, no live URL and the spec revision kept", got, deleted)
		}
		if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->running", "running->deleted"}, e.walk(project, "api")); diff != "" {
			t.Errorf("walk (-want +got):\n%s", diff)
		}
		var apps struct{ Apps []store.App }
		e.api("/api/v1/apps", &apps)
		if len(apps.Apps) != 1 || apps.Apps[0].Phase != store.PhaseDeleted {
			t.Errorf("apps = %+v, want the app deleted", apps.Apps)
		}
		var ds DeployStatus
		e.api("/api/v1/apps/"+project+"/api/deploy-status", &ds)
		if ds.Phase != store.PhaseDeleted || ds.Checks[0].State != probe.StateGone {
			t.Errorf("deploy-status = %+v", ds)
		}
		fake.wait(t)
	})
	t.Run("by a new revision", func(t *testing.T) {
		t.Parallel()
		a, e, fake, deleted := running(t)
		project := a.project
		// The fleet revision that removes the app: its Kustomization fails
		// to find its path there, and is pruned.
		const rev2 = "main@sha1:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		if err := env.Client.Delete(t.Context(), a.k); err != nil {
			t.Fatal(err)
		}
		e.mustPost(fixture(t, "kustomization-buildfailed", withApp(project, "api"), inNamespace(e.srv.cfg.FluxNamespace), withRevision(rev2),
			withMessage("kustomization path not found: stat /tmp/kustomization-1/apps/prod/"+project+"/api/web: no such file or directory")), 200)
		got := e.waitPhase(project, "api", store.PhaseDeleted)
		if got.Revision != rev2 || got.Message != deleted || got.SpecRevision != "" {
			t.Errorf("app = %+v, want %s deleted with no spec revision", got, rev2)
		}
		ds, err := e.st.Deployments(t.Context(), layout.AppRef{Project: project, Name: "api"}, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 2 || ds[1].Phase != store.PhaseRunning || ds[1].SpecRevision != fixtureSpec {
			t.Errorf("deployments = %+v, want rev1 still running with its spec revision", ds)
		}
		// GitHub hears it on the deployment that was active (the only one).
		fake.wait(t)
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		project, fluxNS := env.Namespace(t), env.Namespace(t)
		a := newClusterApp(t, project, fluxNS, "slow", time.Second, false)
		e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1")
		e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "slow"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
		e.waitPhase(project, "slow", store.PhaseFailed)
		if err := env.Client.Delete(t.Context(), a.k); err != nil {
			t.Fatal(err)
		}
		e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "slow"), inNamespace(e.srv.cfg.FluxNamespace), withMessage("Deployment/"+project+"/slow-web deleted")), 200)
		e.waitPhase(project, "slow", store.PhaseDeleted)
		if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->failed", "failed->deleted"}, e.walk(project, "slow")); diff != "" {
			t.Errorf("walk (-want +got):\n%s", diff)
		}
	})
	t.Run("never seen", func(t *testing.T) {
		t.Parallel()
		project, fluxNS := env.Namespace(t), env.Namespace(t)
		e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) { c.DefaultTimeout = 300 * time.Millisecond })
		e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "ghost"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
		got := e.waitPhase(project, "ghost", store.PhaseFailed)
		if want := "timeout (300ms) passed before every check was green: sync: no Flux Kustomization of " + project + "/ghost in " + project + " or " + fluxNS; got.Message != want {
			t.Errorf("message = %q, want %q", got.Message, want)
		}
		// Another event: still not a deletion.
		e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "ghost"), inNamespace(e.srv.cfg.FluxNamespace), withMessage("Deployment/"+project+"/ghost-web configured")), 200)
		time.Sleep(300 * time.Millisecond)
		if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->failed"}, e.walk(project, "ghost")); diff != "" {
			t.Errorf("walk (-want +got):\n%s", diff)
		}
	})
}

func TestClusterProgressDeadlineFails(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	a := newClusterApp(t, project, fluxNS, "stuck", 5*time.Minute, false)
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1")
	a.setSynced(t, rev1)
	a.setReplicas(t, 1, 0, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: probe.ProgressDeadlineExceeded, Message: `ReplicaSet "stuck-web-7c9" has timed out progressing.`})
	e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "stuck"), inNamespace(e.srv.cfg.FluxNamespace)), 200)
	got := e.waitPhase(project, "stuck", store.PhaseFailed)
	if !strings.Contains(got.Message, "readiness check failed: stuck-web: progress deadline exceeded") {
		t.Errorf("message = %q", got.Message)
	}
}

func TestClusterResolverPodsAndLogs(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	newClusterApp(t, project, fluxNS, "shop", 5*time.Minute, true)
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1")
	// No metadata: the Kustomization's labels name the app.
	body := fixture(t, "kustomization-progressing", func(ev *eventv1.Event) {
		ev.Metadata = map[string]string{"revision": rev1}
		ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = fluxNS, project+"-shop-web"
	})
	r := e.mustPost(body, 200)
	if r.App != "shop" || r.Project != project {
		t.Errorf("answer = %+v", r)
	}
	evs, err := e.st.Events(t.Context(), layout.AppRef{Project: project, Name: "shop"}, 1)
	if err != nil || len(evs) != 1 || evs[0].Component != "web" {
		t.Errorf("stored = %+v, %v", evs, err)
	}
	missing := fixture(t, "kustomization-progressing", func(ev *eventv1.Event) {
		ev.Metadata = map[string]string{"revision": rev1}
		ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = fluxNS, "not-there"
	})
	if r := e.mustPost(missing, 202); r.Status != "ignored" {
		t.Errorf("unknown Kustomization = %+v", r)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-web-5d9c7-abcde", Namespace: project,
			Labels: map[string]string{layout.LabelApp: "shop", layout.LabelProject: project, layout.LabelComponent: "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.test/web:v1"}}},
	}
	if err := env.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	var pods struct{ Pods []PodView }
	if code := e.api("/api/v1/apps/"+project+"/shop/pods?component=web", &pods); code != 200 || len(pods.Pods) != 1 ||
		pods.Pods[0].Name != pod.Name || pods.Pods[0].Component != "web" || pods.Pods[0].Ready != "0/1" {
		t.Errorf("pods = %d %+v", code, pods)
	}
	var body2 errorBody
	if code := e.api("/api/v1/apps/"+project+"/shop/logs?component=web", &body2); code != 503 ||
		!strings.Contains(body2.Error, "no pod of component web of "+project+"/shop runs on a node yet") {
		t.Errorf("logs of an unscheduled pod = %d %q", code, body2.Error)
	}
	// Scheduled to a node with no kubelet behind it: the cluster cannot serve logs.
	placed := pod.DeepCopy()
	placed.ObjectMeta = metav1.ObjectMeta{Name: "shop-web-5d9c7-fghij", Namespace: project, Labels: pod.Labels}
	placed.Spec.NodeName = "node-without-kubelet"
	if err := env.Client.Create(t.Context(), placed); err != nil {
		t.Fatal(err)
	}
	if code := e.api("/api/v1/apps/"+project+"/shop/logs?component=web", &body2); code != 502 ||
		!strings.Contains(body2.Error, "logs of pod "+placed.Name+" are not available from the cluster") {
		t.Errorf("logs = %d %q", code, body2.Error)
	}
	if code := e.api("/api/v1/apps/"+project+"/shop/logs?component=db", &body2); code != 404 {
		t.Errorf("logs of a component without pods = %d", code)
	}
	if code := e.api("/api/v1/apps/"+project+"/shop/logs", &body2); code != 400 {
		t.Errorf("logs without component = %d", code)
	}
	var evs2 struct{ Events []EventView }
	if code := e.api("/api/v1/apps/"+project+"/shop/events", &evs2); code != 200 || len(evs2.Events) == 0 {
		t.Errorf("events = %d %+v", code, evs2)
	}
}
