package webhook

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/testenv"
	"github.com/fleetwright/fleetwright/internal/tlstest"
)

// startSecondCluster starts an API server of the test's own besides the
// package's (env): another cluster, with the namespaces named.
func startSecondCluster(t *testing.T, namespaces ...string) *testenv.Env {
	t.Helper()
	b, err := testenv.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
	})
	for _, ns := range namespaces {
		if err := b.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// ingress is an ingress controller on loopback serving every host with
// one certificate, counting the requests it answers.
type ingress struct {
	addr     string
	mu       sync.Mutex
	requests []string
}

func newIngress(t *testing.T, ca *tlstest.CA, host string) *ingress {
	t.Helper()
	in := &ingress{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.mu.Lock()
		in.requests = append(in.requests, r.Host)
		in.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, host)}, MinVersion: tls.VersionTLS12}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	in.addr = ts.Listener.Addr().String()
	return in
}

func (in *ingress) served() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.requests)
}

// proberTo is a prober of the cluster c whose requests all go to the
// ingress controller at addr, as -ingress-address makes them.
func proberTo(c *testenv.Env, ca *tlstest.CA, addr string) *probe.Prober {
	return &probe.Prober{Client: c.Client, RootCAs: ca.Pool(), AllowPrivate: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// TestEnvironmentsOnTwoClusters runs one webhook reading two real API
// servers: cluster stage-eu (its own) runs the app's staging copy and
// prod-eu (-cluster-kubeconfig) its production copy, under the same
// names and the same host. Each environment is checked against its own
// cluster: production's available Deployment, present only in prod-eu,
// makes production running while staging still waits for its own; the
// HTTPS requests of each go to its own cluster's ingress controller; the
// API and the app page show each environment's pods from its cluster. An
// environment on a cluster the webhook has no kubeconfig of is judged by
// its events, and says so.
func TestEnvironmentsOnTwoClusters(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	b := startSecondCluster(t, project, fluxNS)
	stg := newClusterAppOn(t, env.Client, project, fluxNS, "api", 5*time.Minute, false)
	prod := newClusterAppOn(t, b.Client, project, fluxNS, "api", 5*time.Minute, false)
	ca := tlstest.NewCA(t, "test CA")
	stgIngress, prodIngress := newIngress(t, ca, stg.host), newIngress(t, ca, prod.host)
	// A pod of production's, in prod-eu only.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-web-prod", Namespace: project,
		Labels: map[string]string{layout.LabelApp: "api", layout.LabelProject: project, layout.LabelComponent: "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.test/web:v1"}}}}
	if err := b.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	kubeA, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	kubeB, err := kubernetes.NewForConfig(b.Config)
	if err != nil {
		t.Fatal(err)
	}
	var readyB atomic.Int32
	e := newTestEnv(t, func(c *Config) {
		c.Cluster, c.Kube, c.Prober, c.FluxNamespace = env.Client, kubeA, proberTo(env, ca, stgIngress.addr), fluxNS
		c.Clusters = map[string]Cluster{"prod-eu": {Reader: b.Client, Kube: kubeB,
			Prober: readyCounter2{proberTo(b, ca, prodIngress.addr), &readyB}}}
		c.Pages.ClusterName = "stage-eu"
		c.Pages.EnvironmentClusters = map[string]string{"staging": "stage-eu", "production": "prod-eu", "canary": "canary-eu"}
		c.Environments = []string{"staging", "canary", "production"}
		c.Backoff = probe.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	})
	for _, a := range []*clusterApp{stg, prod} {
		a.setSynced(t, rev1)
		a.setReplicas(t, 2, 0)
	}
	for _, envName := range []string{"staging", "production"} {
		e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "api"), inNamespace(fluxNS), inEnvironment(envName)), 200)
	}
	waitIn := func(envName string, want store.Phase) store.App {
		t.Helper()
		var a store.App
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if a, err = e.st.App(t.Context(), layout.AppRef{Project: project, Name: "api"}, envName); err == nil && a.Phase == want {
				return a
			}
		}
		t.Fatalf("%s in %s = %s (%s), want %s", "api", envName, a.Phase, a.Message, want)
		return a
	}
	waitIn("staging", store.PhaseDeploying)
	waitIn("production", store.PhaseDeploying)

	// The available Deployment is only in prod-eu: production runs,
	// staging still waits for its own.
	prod.setReplicas(t, 2, 2)
	waitIn("production", store.PhaseRunning)
	if a, err := e.st.App(t.Context(), layout.AppRef{Project: project, Name: "api"}, "staging"); err != nil || a.Phase != store.PhaseDeploying || !strings.Contains(a.Message, "0/2 available") {
		t.Errorf("staging while only production's Deployment is available = %+v, %v", a, err)
	}
	if readyB.Load() == 0 {
		t.Error("production was not checked through prod-eu's prober")
	}
	if n := prodIngress.served(); n == 0 {
		t.Error("production's HTTPS request did not reach prod-eu's ingress controller")
	}
	if n := stgIngress.served(); n != 0 {
		t.Errorf("staging's ingress controller answered %d request(s) before staging was ready: production's went there", n)
	}
	stg.setReplicas(t, 2, 2)
	waitIn("staging", store.PhaseRunning)
	if stgIngress.served() == 0 {
		t.Error("staging's HTTPS request did not reach stage-eu's ingress controller")
	}

	// Each environment's pods come from its own cluster.
	var pods struct{ Pods []PodView }
	if code := e.api("/api/v1/apps/"+project+"/api/pods?environment=production", &pods); code != 200 || len(pods.Pods) != 1 || pods.Pods[0].Name != "api-web-prod" {
		t.Errorf("production's pods = %d %+v", code, pods.Pods)
	}
	pods.Pods = nil
	if code := e.api("/api/v1/apps/"+project+"/api/pods?environment=staging", &pods); code != 200 || len(pods.Pods) != 0 {
		t.Errorf("staging's pods = %d %+v, want none (the pod is production's, on prod-eu)", code, pods.Pods)
	}
	pg := page(t, e, "/apps/"+project+"/api?environment=production")
	if !strings.Contains(pg, "api-web-prod") || strings.Contains(pg, `id="elsewhere"`) || !strings.Contains(pg, `<span class="env">on prod-eu</span>`) {
		t.Errorf("production's page lacks its pod on prod-eu, or says it runs elsewhere:\n%s", pg)
	}
	if page := page(t, e, "/apps/"+project+"/api?environment=staging"); strings.Contains(page, "api-web-prod") {
		t.Errorf("staging's page shows production's pod:\n%s", page)
	}

	// Canary runs on a cluster the webhook has no kubeconfig of: its
	// events judge it, and its page and API say why nothing more.
	e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "api"), inNamespace(fluxNS), inEnvironment("canary")), 200)
	a := waitIn("canary", store.PhaseRunning)
	d, err := e.st.Deployment(t.Context(), a.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	const why = "runs on cluster canary-eu, which this webhook has no kubeconfig of (it reads stage-eu, prod-eu)"
	if c := decodeResult(d).Check(probe.CheckReadiness); c.State != probe.StateSkipped || c.Message != why {
		t.Errorf("canary's readiness = %s %q, want skipped: %q", c.State, c.Message, why)
	}
	var eb errorBody
	if code := e.api("/api/v1/apps/"+project+"/api/pods?environment=canary", &eb); code != 503 || eb.Error != "environment canary "+why {
		t.Errorf("canary's pods = %d %q", code, eb.Error)
	}
	if page := page(t, e, "/apps/"+project+"/api?environment=canary"); !strings.Contains(page, "canary runs on cluster canary-eu; this webhook has no kubeconfig of it (-cluster-kubeconfig).") ||
		strings.Contains(page, "api-web-prod") {
		t.Errorf("canary's page:\n%s", page)
	}
}

// readyCounter2 is a probe.Checker counting the readiness checks it ran.
type readyCounter2 struct {
	probe.Checker
	ready *atomic.Int32
}

func (c readyCounter2) Readiness(ctx context.Context, t probe.Target) (probe.Check, bool) {
	c.ready.Add(1)
	return c.Checker.Readiness(ctx, t)
}

// page reads a status page as the API token's holder.
func page(t *testing.T, e *testEnv, path string) string {
	t.Helper()
	rec := get(t, e.srv.Handler(), path, testToken)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d", path, rec.Code)
	}
	return rec.Body.String()
}

// TestReplicasCheckEachEnvironmentOnItsCluster: with several replicas,
// each app in each environment is checked by its owner alone, whichever
// replica got its events, and through the cluster its environment runs
// on: staging's through the replicas' own cluster, production's through
// prod-eu's.
func TestReplicasCheckEachEnvironmentOnItsCluster(t *testing.T) {
	t.Parallel()
	type checkers struct{ home, prod *countingChecker }
	var cs []checkers
	green := fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed}
	rs := newReplicas(t, 3, func(_ int, c *Config) {
		cc := checkers{home: &countingChecker{fakeChecker: green, runs: map[string]int{}}, prod: &countingChecker{fakeChecker: green, runs: map[string]int{}}}
		cs = append(cs, cc)
		c.Prober = cc.home
		c.Clusters = map[string]Cluster{"prod-eu": {Reader: env.Client, Prober: cc.prod}}
		c.Pages.ClusterName = "stage-eu"
		c.Pages.EnvironmentClusters = map[string]string{"staging": "stage-eu", "production": "prod-eu"}
		c.RecheckInterval = 100 * time.Millisecond
	})
	const apps = 8
	envs := []string{"staging", "production"}
	for i := range apps {
		app := fmt.Sprintf("app%d", i)
		for j, envName := range envs {
			rs[(i+j)%3].mustPost(appEvent(t, "kustomization-succeeded", app, rev1, inEnvironment(envName)), 200)
		}
	}
	for i := range apps {
		for _, envName := range envs {
			waitUntil(t, "app"+strconv.Itoa(i)+" running in "+envName, func() bool {
				a, err := rs[0].st.App(t.Context(), layout.AppRef{Project: "shop", Name: fmt.Sprintf("app%d", i)}, envName)
				return err == nil && a.Phase == store.PhaseRunning
			})
		}
	}
	time.Sleep(500 * time.Millisecond) // rechecks
	for i := range apps {
		app := fmt.Sprintf("app%d", i)
		for _, envName := range envs {
			var on []int
			for k, c := range cs {
				ran := c.home
				if envName == "production" {
					ran = c.prod
				}
				if ran.counts()["shop/"+app] > 0 {
					on = append(on, k)
				}
			}
			if len(on) != 1 || !rs[on[0]].owners.Owns(layout.AppRef{Project: "shop", Name: app}, envName) {
				t.Errorf("%s in %s was checked through its cluster on replicas %v; want its owner alone", app, envName, on)
			}
		}
	}
	// Nothing of production's went through the replicas' own cluster, nor
	// of staging's through prod-eu's: each checker saw only the apps whose
	// owner it is in its environment.
	for k, c := range cs {
		for app := range c.home.counts() {
			if name := strings.TrimPrefix(app, "shop/"); !rs[k].owners.Owns(layout.AppRef{Project: "shop", Name: name}, "staging") {
				t.Errorf("replica %d checked %s on stage-eu without owning it in staging", k, app)
			}
		}
		for app := range c.prod.counts() {
			if name := strings.TrimPrefix(app, "shop/"); !rs[k].owners.Owns(layout.AppRef{Project: "shop", Name: name}, "production") {
				t.Errorf("replica %d checked %s on prod-eu without owning it in production", k, app)
			}
		}
	}
}
