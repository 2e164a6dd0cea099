package webhook

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/tlstest"
)

// shotApp is one app of the screenshots' fleet.
type shotApp struct {
	project, name string
	// available of 2 replicas; failed: Flux's health check failed.
	available int32
	failed    bool
	cpu, mem  string // requested by its one container
}

// TestBrowserScreenshots writes the README's screenshots of the status
// pages (docs/status-overview.png, docs/status-overview-phone.png,
// docs/status-app.png) from a fleet as a team would have it: projects shop,
// payments and search, their apps rolled out by real signed Flux events
// against the test API server, pods running, their use served through the
// aggregation layer, and the requests priced. It runs only with
// -update-screenshots, alone, since it names namespaces itself and
// registers the metrics API on the package's API server:
//
//	go test ./internal/webhook -run TestBrowserScreenshots -update-screenshots
func TestBrowserScreenshots(t *testing.T) {
	if !*updateScreenshots {
		t.Skip("writes the screenshots under docs/: run with -update-screenshots")
	}
	ctx := newBrowser(t)
	fleet := []shotApp{
		{"shop", "storefront", 2, false, "250m", "256Mi"},
		{"shop", "checkout", 1, false, "200m", "192Mi"},
		{"shop", "cart", 2, false, "100m", "128Mi"},
		{"payments", "ledger", 0, true, "500m", "1Gi"},
		{"payments", "invoices", 2, false, "150m", "256Mi"},
		{"search", "indexer", 2, false, "1", "2Gi"},
	}
	const fluxNS = "flux-system"
	for _, ns := range []string{fluxNS, "shop", "payments", "search"} {
		if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	ms, stop, err := env.ServeMetrics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })

	// One TLS site answers for every app's host.
	var hosts []string
	for _, a := range fleet {
		hosts = append(hosts, a.name+"."+a.project+".example.test")
	}
	ca := tlstest.NewCA(t, "Example Issuing CA")
	site := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	site.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, hosts...)}, MinVersion: tls.VersionTLS12}
	site.StartTLS()
	t.Cleanup(site.Close)
	mc, err := metricsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := clusterEnv(t, fluxNS, ca.Pool(), site.Listener.Addr().String(), func(c *Config) {
		c.Metrics = mc
		c.Pages = PagesConfig{ViewerToken: testViewerToken, ClusterName: "prod", FleetRepoURL: "https://github.com/acme/fleet",
			AppsRepoURL: "https://github.com/acme/apps", Prices: Prices{CPUHour: 0.031, MemoryGiBHour: 0.0042, Currency: "EUR"}}
	})

	uses := map[string][]metricsv1beta1.PodMetrics{}
	for i, a := range fleet {
		app := newClusterApp(t, a.project, fluxNS, a.name, 5*time.Minute, false)
		req := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(a.cpu), corev1.ResourceMemory: resource.MustParse(a.mem)}}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(app.d), app.d); err != nil {
			t.Fatal(err)
		}
		app.d.Spec.Template.Spec.Containers[0].Resources = req
		app.d.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("ghcr.io/acme/%s/%s-web:1.%d.0", a.project, a.name, 4+i)
		if err := env.Client.Update(t.Context(), app.d); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{layout.LabelApp: a.name, layout.LabelProject: a.project, layout.LabelComponent: "web"}
		for r := range 2 {
			ready := int32(r) < a.available
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-web-6f9c7d%d4b-%s", a.name, i, []string{"k2x8p", "r7q4z"}[r]), Namespace: a.project, Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: app.d.Spec.Template.Spec.Containers[0].Image, Resources: req}}},
			}
			if err := env.Client.Create(t.Context(), pod); err != nil {
				t.Fatal(err)
			}
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptrTime(time.Now().Add(-time.Duration(10+i) * time.Minute)),
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: ready, RestartCount: int32(map[bool]int{true: 0, false: 3}[ready])}}}
			if err := env.Client.Status().Update(t.Context(), pod); err != nil {
				t.Fatal(err)
			}
			cpu := resource.MustParse(a.cpu)
			mem := resource.MustParse(a.mem)
			uses[a.project] = append(uses[a.project], metricsv1beta1.PodMetrics{
				ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Labels: labels}, Timestamp: metav1.Now(), Window: metav1.Duration{Duration: 30 * time.Second},
				Containers: []metricsv1beta1.ContainerMetrics{{Name: "web", Usage: corev1.ResourceList{
					corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu.MilliValue()*int64(35+20*r)/100, resource.DecimalSI),
					corev1.ResourceMemory: *resource.NewQuantity(mem.Value()*int64(55+10*r)/100, resource.BinarySI)}}},
			})
		}
		e.mustPost(fixture(t, "kustomization-progressing", withApp(a.project, a.name), inNamespace(fluxNS), func(ev *eventv1.Event) {
			ev.Timestamp = metav1.Now()
			ev.Message = fmt.Sprintf("Deployment/%[1]s/%[2]s-web configured\nService/%[1]s/%[2]s-web unchanged\nIngress/%[1]s/%[2]s-web unchanged", a.project, a.name)
		}), 200)
		if a.failed {
			setKustomizationStatus(t, app.k, "", rev1, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
				Reason: meta.HealthCheckFailedReason, Message: "health check failed after 5m0s: timeout waiting for: [Deployment/payments/ledger-web status: 'InProgress']"})
			e.mustPost(fixture(t, "kustomization-healthcheckfailed", withApp(a.project, a.name), inNamespace(fluxNS), func(ev *eventv1.Event) {
				ev.Timestamp = metav1.Now()
			}), 200)
			continue
		}
		app.setSynced(t, rev1)
		app.setReplicas(t, 2, a.available)
	}
	for ns, pms := range uses {
		ms.SetPods(ns, pms...)
	}
	for _, a := range fleet {
		switch {
		case a.failed:
			e.waitPhase(a.project, a.name, store.PhaseFailed)
		case a.available < 2:
			e.waitPhase(a.project, a.name, store.PhaseDeploying)
		default:
			e.waitPhase(a.project, a.name, store.PhaseRunning)
		}
	}

	base := e.ts.URL
	browse(t, ctx, "sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), testViewerToken),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS("section#apps")),
	)
	screenshot(t, ctx, base+"/", "status-overview.png")
	screenshot(t, ctx, base+"/apps/shop/storefront", "status-app.png")
	browse(t, ctx, "a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	screenshot(t, ctx, base+"/", "status-overview-phone.png")
}

func ptrTime(t time.Time) *metav1.Time {
	m := metav1.NewTime(t)
	return &m
}
