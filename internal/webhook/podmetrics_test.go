package webhook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/testenv"
)

// usageApp writes the workloads of project/api on the API server: web, a
// Deployment of 2 replicas whose two containers request 250m + 50m of CPU
// and 256Mi + 64Mi of memory, and db, a StatefulSet of one replica
// requesting 500m and 1Gi.
func usageApp(t testing.TB, c client.Client, project string) {
	t.Helper()
	labels := func(comp string) map[string]string {
		return map[string]string{layout.LabelApp: "api", layout.LabelProject: project, layout.LabelComponent: comp}
	}
	req := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	sel := func(comp string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/instance": "api-" + comp}}
	}
	tmpl := func(comp string, cs ...corev1.Container) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/instance": "api-" + comp}},
			Spec: corev1.PodSpec{Containers: cs}}
	}
	for _, o := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api-web", Namespace: project, Labels: labels("web")},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: sel("web"), Template: tmpl("web",
				corev1.Container{Name: "web", Image: "registry.example.test/api-web:v1", Resources: req("250m", "256Mi")},
				corev1.Container{Name: "proxy", Image: "registry.example.test/proxy:v1", Resources: req("50m", "64Mi")})}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "api-db", Namespace: project, Labels: labels("db")},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(1)), Selector: sel("db"), ServiceName: "api-db", Template: tmpl("db",
				corev1.Container{Name: "db", Image: "registry.example.test/postgres:17", Resources: req("500m", "1Gi")})}},
		// Another app of the project: not counted.
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "admin-web", Namespace: project,
			Labels: map[string]string{layout.LabelApp: "admin", layout.LabelProject: project, layout.LabelComponent: "web"}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(5)), Selector: sel("admin"), Template: tmpl("admin",
				corev1.Container{Name: "web", Image: "registry.example.test/admin:v1", Resources: req("4", "8Gi")})}},
	} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// usageServer is a page server on the API server of cfg, with prices.
func usageServer(t testing.TB, cfg *rest.Config, project string) *Server {
	t.Helper()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, st := pageServer(t, func(c *Config) {
		c.Kube, c.Metrics = kube, mc
		c.Pages.Prices = Prices{CPUHour: 0.031, MemoryGiBHour: 0.0042, Currency: "EUR"}
	})
	recordDeployment(t, st, project, "api", 1, store.PhaseRunning, "sync passed, readiness passed, reachability passed", probe.Result{}, "")
	return srv
}

// usageRows are the rows of the app page's usage table, each as the text
// of its cells joined by " | ".
func usageRows(t *testing.T, page string) []string {
	t.Helper()
	i := strings.Index(page, `<section class="card" id="usage">`)
	if i < 0 {
		t.Fatalf("the app page has no usage section:\n%s", page)
	}
	sec := page[i : i+strings.Index(page[i:], "</section>")]
	var rows []string
	for _, tr := range strings.Split(sec, "<tr>")[1:] {
		tr = tr[:strings.Index(tr, "</tr>")]
		var cells []string
		for _, c := range strings.Split(tr, "</t")[:strings.Count(tr, "</t")] {
			cells = append(cells, c[strings.LastIndex(c, ">")+1:])
		}
		rows = append(rows, strings.Join(cells, " | "))
	}
	return rows
}

// TestAppPageMetricsAndCost reads an app's CPU and memory use through the
// API server's aggregation layer, from a metrics server registered by an
// APIService, and prices its requests: (250m + 50m) × 2 and (256Mi +
// 64Mi) × 2 for web, 500m and 1Gi for db, at 0.031 EUR per CPU hour and
// 0.0042 EUR per GiB hour.
func TestAppPageMetricsAndCost(t *testing.T) {
	t.Parallel()
	// An API server of its own: the APIService is cluster-wide, and the
	// other tests' cluster has no metrics API.
	own, err := testenv.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Stop() })
	ms, stop, err := own.ServeMetrics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	project := own.Namespace(t)
	usageApp(t, own.Client, project)
	use := func(name, comp, cpu, mem string) metricsv1beta1.PodMetrics {
		return metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{layout.LabelApp: "api", layout.LabelProject: project, layout.LabelComponent: comp}},
			Timestamp:  metav1.Now(), Window: metav1.Duration{Duration: 30e9},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: comp, Usage: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}},
		}
	}
	ms.SetPods(project, use("api-web-7d4b9c6f5-x2x9z", "web", "120m", "100Mi"), use("api-web-7d4b9c6f5-q8k2m", "web", "80m", "110Mi"),
		use("api-db-0", "db", "300m", "700Mi"),
		metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: "admin-web-1", Labels: map[string]string{layout.LabelApp: "admin", layout.LabelProject: project}}})
	srv := usageServer(t, own.Config, project)
	rec := get(t, srv.Handler(), "/apps/"+project+"/api", testToken)
	if rec.Code != 200 {
		t.Fatalf("GET the app page = %d %s", rec.Code, rec.Body)
	}
	page := rec.Body.String()
	want := []string{
		"Component | Replicas | CPU requested | Memory requested | CPU used | Memory used | Per hour | Per 30 days",
		"db | 1 | 500m | 1Gi | 300m | 700Mi | 0.0197 EUR | 14.18 EUR",
		"web | 2 | 600m | 640Mi | 200m | 210Mi | 0.0212 EUR | 15.28 EUR",
		"Total | 3 | 1.1 | 1.63Gi | 500m | 910Mi | 0.0409 EUR | 29.47 EUR",
	}
	if got := usageRows(t, page); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the usage table reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(page, `id="no-metrics"`) || ms.Requests() == 0 {
		t.Errorf("the page did not read the metrics API (%d requests)", ms.Requests())
	}
}

// TestAppPageNoMetricsAPI: on a cluster that serves no metrics.k8s.io the
// app page says so, and still prices the app's requests.
func TestAppPageNoMetricsAPI(t *testing.T) {
	t.Parallel()
	project := env.Namespace(t)
	usageApp(t, env.Client, project)
	srv := usageServer(t, env.Config, project)
	page := get(t, srv.Handler(), "/apps/"+project+"/api", testToken).Body.String()
	if !strings.Contains(page, `<p class="empty" id="no-metrics">This cluster has no metrics API (metrics.k8s.io)`) {
		t.Errorf("the page does not say the cluster has no metrics API:\n%s", page)
	}
	want := []string{
		"Component | Replicas | CPU requested | Memory requested | Per hour | Per 30 days",
		"db | 1 | 500m | 1Gi | 0.0197 EUR | 14.18 EUR",
		"web | 2 | 600m | 640Mi | 0.0212 EUR | 15.28 EUR",
		"Total | 3 | 1.1 | 1.63Gi | 0.0409 EUR | 29.47 EUR",
	}
	if got := usageRows(t, page); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the usage table reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// BenchmarkAppPageUsage renders the page of an app with two workloads and
// three pods on the real API server, its PodMetrics read through the
// aggregation layer from the test's metrics server: the card's reads
// (Deployments, StatefulSets, PodMetrics) next to the page's others (pods,
// events). The page without a metrics API is the same without the
// aggregation hop; see docs/webhook.md.
func BenchmarkAppPageUsage(b *testing.B) {
	own, err := testenv.Start(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = own.Stop() })
	ms, stop, err := own.ServeMetrics(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stop() })
	project := own.Namespace(b)
	usageApp(b, own.Client, project)
	labels := map[string]string{layout.LabelApp: "api", layout.LabelProject: project, layout.LabelComponent: "web"}
	var pms []metricsv1beta1.PodMetrics
	for _, n := range []string{"api-web-1", "api-web-2", "api-db-0"} {
		pms = append(pms, metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "web", Usage: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi")}}}})
	}
	ms.SetPods(project, pms...)
	srv := usageServer(b, own.Config, project)
	path := "/apps/" + project + "/api"
	for _, bc := range []struct {
		name string
		srv  *Server
		want string
	}{
		{"metrics", srv, "<td>300m</td>"},
		// The same page with no metrics client: the card without the use.
		{"no-metrics", noMetrics(usageServer(b, own.Config, project)), `id="no-metrics"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := bc.srv.Handler()
			for b.Loop() {
				if rec := get(b, h, path, testToken); rec.Code != 200 || !strings.Contains(rec.Body.String(), bc.want) {
					b.Fatalf("GET %s = %d", path, rec.Code)
				}
			}
		})
	}
}

// noMetrics makes srv read no metrics API.
func noMetrics(srv *Server) *Server {
	srv.cfg.Metrics = nil
	return srv
}

// TestAppPageOtherEnvironmentsCluster: a webhook reading cluster stage-eu
// shows staging's pods, use and cost, and for production, which runs on
// prod-eu, none of them: the workloads of the same project and name on
// stage-eu are staging's.
func TestAppPageOtherEnvironmentsCluster(t *testing.T) {
	t.Parallel()
	project := env.Namespace(t)
	usageApp(t, env.Client, project)
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	srv, st := pageServer(t, func(c *Config) {
		c.Kube = kube
		c.Environments = []string{"staging", "production"}
		c.Pages.ClusterName = "stage-eu"
		c.Pages.EnvironmentClusters = map[string]string{"staging": "stage-eu", "production": "prod-eu"}
	})
	for i, e := range []string{"staging", "production"} {
		at := pageT0.Add(time.Duration(i) * time.Minute)
		rev := fmt.Sprintf("main@sha1:%040d", i+1)
		if _, err := st.RecordEvents(t.Context(), []store.Event{{
			DedupeKey: e, ReceivedAt: at, EventTime: at, Kind: "Kustomization", Namespace: "flux-system", Name: project + "-api-web",
			Severity: "info", Reason: "ReconciliationSucceeded", Message: "Applied revision " + rev, Revision: rev,
			Controller: "kustomize-controller", App: layout.AppRef{Project: project, Name: "api"}, Component: "web", Environment: e,
			Health: store.HealthHealthy, Body: []byte(`{}`),
		}}, at); err != nil {
			t.Fatal(err)
		}
	}
	prod := get(t, srv.Handler(), "/apps/"+project+"/api?environment=production", testToken).Body.String()
	want := "production runs on cluster prod-eu; this webhook reads cluster stage-eu."
	if !strings.Contains(prod, want) || strings.Contains(prod, "No cluster configured") {
		t.Errorf("production's page does not say its cluster is another:\n%s", prod)
	}
	if rows := usageRows(t, prod); len(rows) != 0 {
		t.Errorf("production's page shows staging's usage: %v", rows)
	}
	staging := get(t, srv.Handler(), "/apps/"+project+"/api?environment=staging", testToken).Body.String()
	if strings.Contains(staging, "runs on cluster") || len(usageRows(t, staging)) == 0 {
		t.Errorf("staging's page lacks its cluster's usage:\n%s", staging)
	}
}
