package webhook

import (
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

const testViewerToken = "viewer-test-token"

// pageT0 is the fixed time of the golden pages.
var pageT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixedClock is a clock that stands still.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// pageServer is a Server on a SQLite file that is not started: what the
// store holds is exactly what a test wrote to it.
func pageServer(t testing.TB, mod func(*Config)) (*Server, *store.SQL) {
	t.Helper()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cfg := Config{Store: st, APIToken: testToken, Clock: fixedClock{pageT0.Add(time.Hour)}, RecheckInterval: -1, PruneInterval: -1,
		Pages: PagesConfig{ViewerToken: testViewerToken, ClusterName: "prod",
			FleetRepoURL: "https://git.example.test/acme/fleet", AppsRepoURL: "https://git.example.test/acme/apps/-/commit/{commit}"}}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv, st
}

// deployment records a Flux event of project/app at revision rev, and
// then the phase and checks given; it returns the deployment's id.
func recordDeployment(t testing.TB, st *store.SQL, project, app string, n int, phase store.Phase, msg string, res probe.Result, live string) int64 {
	t.Helper()
	at := pageT0.Add(time.Duration(n) * time.Minute)
	rev := fmt.Sprintf("main@sha1:%x", sha1.Sum(fmt.Appendf(nil, "fleet %d", n)))
	spec := fmt.Sprintf("%x", sha1.Sum(fmt.Appendf(nil, "spec %d", n)))
	health, reason, message := store.HealthProgressing, "Progressing", "Deployment/"+project+"/"+app+"-web configured"
	if phase == store.PhaseFailed {
		health, reason, message = store.HealthFailed, "HealthCheckFailed", "health check failed after 5m0s: timeout waiting for: [Deployment/"+project+"/"+app+"-web status: 'InProgress']"
	}
	recs, err := st.RecordEvents(t.Context(), []store.Event{{
		DedupeKey: fmt.Sprintf("%s/%s/%d", project, app, n), ReceivedAt: at, EventTime: at,
		Kind: "Kustomization", Namespace: "flux-system", Name: project + "-" + app + "-web",
		Severity: map[bool]string{true: "error", false: "info"}[phase == store.PhaseFailed], Reason: reason, Message: message,
		Revision: rev, Controller: "kustomize-controller", App: layout.AppRef{Project: project, Name: app}, Component: "web", SpecRevision: spec,
		Health: health, Terminal: phase == store.PhaseFailed, Body: []byte(`{}`),
	}}, at)
	if err != nil {
		t.Fatal(err)
	}
	id := recs[0].DeploymentID
	if phase == store.PhasePending {
		return id
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	steps := []store.Phase{store.PhaseDeploying}
	if phase != store.PhaseDeploying {
		steps = append(steps, phase)
	}
	for i, ph := range steps {
		u := store.DeploymentUpdate{ID: id, Phase: ph, Message: msg, Checks: raw, LiveURL: live, Timeout: 5 * time.Minute,
			UpdatedAt: at.Add(time.Duration(i+1) * 10 * time.Second)}
		if ph.Final() {
			u.FinishedAt = u.UpdatedAt
		}
		if _, err := st.UpdateDeployment(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func check(name string, st probe.State, msg string, attempts int, at time.Time) probe.Check {
	return probe.Check{Name: name, State: st, Message: msg, Attempts: attempts, CheckedAt: at, Duration: 42 * time.Millisecond}
}

// pageFixtures writes one app per state of the checks.
func pageFixtures(t *testing.T, st *store.SQL) {
	t.Helper()
	at := pageT0.Add(30 * time.Second)
	kust := func(project, app string, s probe.State, msg string) []probe.ComponentStatus {
		return []probe.ComponentStatus{{Component: "web", Kind: "Kustomization", Name: project + "-" + app + "-web", State: s, Message: msg}}
	}
	dep := func(app string, s probe.State, avail int32) []probe.ComponentStatus {
		return []probe.ComponentStatus{{Component: "web", Kind: "Deployment", Name: app + "-web", State: s,
			Message: "rollout", Desired: ptr.To(int32(2)), Updated: ptr.To(int32(2)), Available: ptr.To(avail)}}
	}
	// pending: Flux's first event, no check yet.
	recordDeployment(t, st, "shop", "cart", 1, store.PhasePending, "", probe.Result{}, "")

	// deploying: synced, the workload rolling out, reachability waiting.
	sync := check(probe.CheckSync, probe.StatePassed, "1 Kustomization applied main@sha1:…", 2, at)
	sync.Components = kust("shop", "api", probe.StatePassed, "Applied revision")
	ready := check(probe.CheckReadiness, probe.StateProgressing, "Deployment api-web: 2/2 updated, 1/2 available", 3, at)
	ready.Components = dep("api", probe.StateProgressing, 1)
	recordDeployment(t, st, "shop", "api", 2, store.PhaseDeploying, "readiness: Deployment api-web: 2/2 updated, 1/2 available",
		probe.Result{Checks: []probe.Check{sync, ready, check(probe.CheckReachability, probe.StatePending, "", 0, time.Time{})}}, "")

	// running, after an earlier deployment that failed.
	failSync := check(probe.CheckSync, probe.StateFailed, "shop-web-web: HealthCheckFailed: health check failed after 5m0s", 4, at)
	failSync.Components = kust("shop", "web", probe.StateFailed, "HealthCheckFailed")
	recordDeployment(t, st, "shop", "web", 3, store.PhaseFailed, "sync check failed: shop-web-web: HealthCheckFailed: health check failed after 5m0s",
		probe.Result{Checks: []probe.Check{failSync, check(probe.CheckReadiness, probe.StatePending, "", 0, time.Time{}),
			check(probe.CheckReachability, probe.StatePending, "", 0, time.Time{})}}, "")
	sync.Components = kust("shop", "web", probe.StatePassed, "Applied revision")
	ready = check(probe.CheckReadiness, probe.StatePassed, "1 Deployment ready", 2, at)
	ready.Components = dep("web", probe.StatePassed, 2)
	reach := check(probe.CheckReachability, probe.StatePassed, "https://web.shop.example.test/ answered 200", 1, at)
	reach.Endpoints = []probe.Endpoint{{Host: "web.shop.example.test", URL: "https://web.shop.example.test/", State: probe.StatePassed,
		StatusCode: 200, Latency: 12 * time.Millisecond, TLS: &probe.TLSInfo{Subject: "web.shop.example.test", Issuer: "Example CA",
			NotAfter: pageT0.Add(80 * 24 * time.Hour), DaysToExpiry: 80, Verified: true}}}
	recordDeployment(t, st, "shop", "web", 4, store.PhaseRunning, "sync passed, readiness passed, reachability passed",
		probe.Result{Checks: []probe.Check{sync, ready, reach}, LiveURL: "https://web.shop.example.test/"}, "https://web.shop.example.test/")

	// failed: Flux's reason.
	recordDeployment(t, st, "billing", "invoices", 5, store.PhaseFailed, "sync check failed: billing-invoices-web: HealthCheckFailed: health check failed after 5m0s",
		probe.Result{Checks: []probe.Check{failSync, check(probe.CheckReadiness, probe.StatePending, "", 0, time.Time{}),
			check(probe.CheckReachability, probe.StatePending, "", 0, time.Time{})}}, "")

	// running on a certificate about to expire.
	soon := reach
	soon.Endpoints = []probe.Endpoint{{Host: "legacy.shop.example.test", URL: "https://legacy.shop.example.test/", State: probe.StatePassed,
		StatusCode: 200, Latency: 30 * time.Millisecond, TLS: &probe.TLSInfo{Subject: "legacy.shop.example.test", Issuer: "Example CA",
			NotAfter: pageT0.Add(9 * 24 * time.Hour), DaysToExpiry: 9, Verified: true, Warning: "the certificate expires in 9 days"}}}
	recordDeployment(t, st, "shop", "legacy", 8, store.PhaseRunning,
		"sync passed, readiness passed, reachability passed; legacy.shop.example.test: the certificate expires in 9 days",
		probe.Result{Checks: []probe.Check{sync, ready, soon}, LiveURL: "https://legacy.shop.example.test/"}, "https://legacy.shop.example.test/")

	// degraded and back, over and over: the history shows the newest
	// phase changes.
	id := recordDeployment(t, st, "shop", "flappy", 7, store.PhaseRunning, "sync passed, readiness passed, reachability passed",
		probe.Result{Checks: []probe.Check{sync, ready, reach}}, "")
	for i := range 24 {
		ph, msg := store.PhaseDegraded, "readiness: Deployment flappy-web: 2/2 updated, 1/2 available"
		if i%2 == 1 {
			ph, msg = store.PhaseRunning, "sync passed, readiness passed, reachability passed"
		}
		if _, err := st.UpdateDeployment(t.Context(), store.DeploymentUpdate{ID: id, Phase: ph, Message: msg,
			Checks: json.RawMessage(`{"checks":[]}`), UpdatedAt: pageT0.Add(time.Duration(10+i) * time.Minute),
			FinishedAt: pageT0.Add(7*time.Minute + 20*time.Second)}); err != nil {
			t.Fatal(err)
		}
	}

	// superseded: a running deployment, then a newer revision rolling
	// out; the older one is no longer running.
	recordDeployment(t, st, "shop", "checkout", 10, store.PhaseRunning, "sync passed, readiness passed, reachability passed",
		probe.Result{Checks: []probe.Check{sync, ready, reach}}, "")
	recordDeployment(t, st, "shop", "checkout", 11, store.PhaseDeploying, "readiness: Deployment checkout-web: 2/2 updated, 1/2 available",
		probe.Result{Checks: []probe.Check{sync, check(probe.CheckReadiness, probe.StateProgressing, "Deployment checkout-web: 2/2 updated, 1/2 available", 3, at),
			check(probe.CheckReachability, probe.StatePending, "", 0, time.Time{})}}, "")

	// failed long after its rollout: running at 12:12:20, degraded at
	// 12:40, failed at 12:50 (degraded for longer than its timeout).
	id = recordDeployment(t, st, "billing", "ledger", 12, store.PhaseRunning, "sync passed, readiness passed, reachability passed",
		probe.Result{Checks: []probe.Check{sync, ready, reach}}, "")
	for i, ph := range []store.Phase{store.PhaseDegraded, store.PhaseFailed} {
		msg := "readiness: Deployment ledger-web: 2/2 updated, 1/2 available"
		if ph == store.PhaseFailed {
			msg = "degraded for longer than the timeout (5m0s): " + msg
		}
		if _, err := st.UpdateDeployment(t.Context(), store.DeploymentUpdate{ID: id, Phase: ph, Message: msg,
			Checks: json.RawMessage(`{"checks":[]}`), UpdatedAt: pageT0.Add(time.Duration(40+10*i) * time.Minute),
			FinishedAt: pageT0.Add(12*time.Minute + 20*time.Second)}); err != nil {
			t.Fatal(err)
		}
	}

	// skipped: no cluster, so readiness and reachability do not apply.
	evSync := check(probe.CheckSync, probe.StatePassed, "1 components reconciled (from Flux events)", 1, at)
	recordDeployment(t, st, "billing", "reports", 6, store.PhaseRunning, "sync passed, readiness skipped, reachability skipped",
		probe.Result{Checks: []probe.Check{evSync, check(probe.CheckReadiness, probe.StateSkipped, "no cluster configured", 1, at),
			check(probe.CheckReachability, probe.StateSkipped, "no cluster configured", 1, at)}}, "")
}

// get fetches a path from h with the bearer token tok (none if empty).
func get(t testing.TB, h http.Handler, path, tok string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// pageGolden compares got with testdata/pages/name, or rewrites it with
// -update.
func pageGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.File(t, filepath.Join("testdata", "pages", name), got)
}

// TestPageGolden renders the overview and the page of an app in each state
// of the checks: pending, progressing, passed (with a past failed
// deployment to roll back to), failed with Flux's reason, and skipped.
func TestPageGolden(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, nil)
	pageFixtures(t, st)
	h := srv.Handler()
	tests := []struct{ name, path string }{
		{"overview.html", "/"},
		{"overview-failed.html", "/?phase=failed"},
		{"overview-search.html", "/?q=in&project=billing"},
		{"app-pending.html", "/apps/shop/cart"},
		{"app-progressing.html", "/apps/shop/api"},
		{"app-passed.html", "/apps/shop/web"},
		{"app-failed.html", "/apps/billing/invoices"},
		{"app-skipped.html", "/apps/billing/reports"},
		{"app-flapping.html", "/apps/shop/flappy"},
		{"app-tls-warning.html", "/apps/shop/legacy"},
		{"app-superseded.html", "/apps/shop/checkout"},
		{"app-failed-later.html", "/apps/billing/ledger"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := get(t, h, tc.path, testToken)
			if rec.Code != 200 {
				t.Fatalf("GET %s = %d %s", tc.path, rec.Code, rec.Body)
			}
			body := rec.Body.Bytes()
			for _, secret := range []string{testToken, testViewerToken} {
				if strings.Contains(string(body), secret) {
					t.Errorf("GET %s shows a token", tc.path)
				}
			}
			pageGolden(t, tc.name, body)
		})
	}
}

// TestAppPageCluster renders an app page with a cluster: the app's pod from
// the API server, and the logs' error when no kubelet serves them.
func TestAppPageCluster(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	newClusterApp(t, project, fluxNS, "api", 5*time.Minute, false)
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api-web-7d4b9c6f5-x2x9z", Namespace: project,
			Labels: map[string]string{layout.LabelApp: "api", layout.LabelProject: project, layout.LabelComponent: "web"}},
		Spec: corev1.PodSpec{NodeName: "node-that-is-not-there", Containers: []corev1.Container{{Name: "web", Image: "registry.example.test/web:v1"}}},
	}
	if err := env.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "api"), inNamespace(fluxNS)), 200)
	e.waitPhase(project, "api", store.PhaseDeploying)
	rec := get(t, e.srv.Handler(), "/apps/"+project+"/api", testToken)
	if rec.Code != 200 {
		t.Fatalf("GET the app page = %d %s", rec.Code, rec.Body)
	}
	page := rec.Body.String()
	for _, want := range []string{
		"<tr><td><code>api-web-7d4b9c6f5-x2x9z</code></td><td>web</td>",
		"<h3>web · <code>api-web-7d4b9c6f5-x2x9z</code> / web</h3>",
		`<p class="error">the logs are not available from the cluster (is the node&#39;s kubelet reachable?): `,
		"<td>flux</td><td>Progressing</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the app page lacks %q", want)
		}
	}
}

// TestAppPageHistoryPages walks the history of an app with 12 deployments,
// 10 a page, with each deployment's rollback command.
func TestAppPageHistoryPages(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, func(c *Config) { c.Pages.ClusterName = "" })
	for n := range 12 {
		recordDeployment(t, st, "shop", "api", n+1, store.PhaseRunning, "green", probe.Result{}, "")
	}
	deployments := regexp.MustCompile(`id="deployment-(\d+)"`)
	ids := func(page string) string {
		var out []string
		for _, m := range deployments.FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return strings.Join(out, " ")
	}
	first := get(t, srv.Handler(), "/apps/shop/api", testToken).Body.String()
	if got := ids(first); got != "12 11 10 9 8 7 6 5 4 3" {
		t.Errorf("first page = %s", got)
	}
	older := regexp.MustCompile(`<a href="([^"]+)" rel="next">Older →</a>`).FindStringSubmatch(first)
	if older == nil {
		t.Fatal("no link to older deployments")
	}
	u, err := url.Parse(older[1])
	if err != nil || u.Fragment != "history" {
		t.Fatalf("link to older deployments %q: %v", older[1], err)
	}
	next := get(t, srv.Handler(), u.RequestURI(), testToken).Body.String()
	if got := ids(next); got != "2 1" || !strings.Contains(next, "← Newest") || strings.Contains(next, "Older →") {
		t.Errorf("second page = %s", got)
	}
	spec1 := fmt.Sprintf("%x", sha1.Sum([]byte("spec 1")))
	if want := "render rollback shop/api --to " + spec1; !strings.Contains(next, "<code>"+want+"</code>") {
		t.Errorf("the second page lacks %q", want)
	}
	if strings.Contains(first, `<li class="deployment current" id="deployment-12">`) && strings.Count(first, "render rollback") != 2*9 {
		t.Errorf("first page has %d rollback commands, want 9 (each in the text and the copy button)", strings.Count(first, "render rollback")/2)
	}
}

// TestAppPageOlderHistoryFinished: the facts of the current deployment
// read the same on an older page of the history, which does not list it:
// a deployment that failed after its rollout finished when it failed.
func TestAppPageOlderHistoryFinished(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, nil)
	pageFixtures(t, st)
	finished := regexp.MustCompile(`<dt>Finished</dt>\s*<dd>([^<]*)</dd>`)
	for _, path := range []string{"/apps/billing/ledger", "/apps/billing/ledger?before=" + encodeCursor(1)} {
		page := get(t, srv.Handler(), path, testToken).Body.String()
		m := finished.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("%s has no Finished fact", path)
		}
		if m[1] != "2026-03-01 12:50:00Z" {
			t.Errorf("%s: Finished %q, want when it failed (2026-03-01 12:50:00Z)", path, m[1])
		}
	}
}

// TestNotFoundPage: an app that does not exist, and a path under /apps/
// that names no app, get the site's own 404 page (its navigation and a
// way back); the API answers JSON as before.
func TestNotFoundPage(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, nil)
	pageFixtures(t, st)
	h := srv.Handler()
	rec := get(t, h, "/apps/shop/nope", testToken)
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /apps/shop/nope = %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	pageGolden(t, "notfound.html", rec.Body.Bytes())
	if !strings.Contains(rec.Body.String(), `<p class="message">No app shop/nope.</p>`) ||
		!strings.Contains(rec.Body.String(), `<a class="button" href="/?project=shop">Apps of shop</a>`) {
		t.Errorf("the 404 page of shop/nope lacks its message or the way back to shop's apps")
	}
	for _, path := range []string{"/apps/shop", "/apps/shop/web/more"} {
		rec := get(t, h, path, testToken)
		if rec.Code != 404 || !strings.Contains(rec.Body.String(), `<p class="message">No page `+path+`.</p>`) ||
			!strings.Contains(rec.Body.String(), `<a class="brand" href="/">fleetwright</a>`) {
			t.Errorf("GET %s = %d %q, want the 404 page", path, rec.Code, rec.Body)
		}
	}
	// A path written to put markup in the page: it shows as text.
	rec = get(t, h, "/apps/%3Cscript%3Ealert(1)%3C%2Fscript%3E/x/y", testToken)
	if rec.Code != 404 || strings.Contains(rec.Body.String(), "<script>alert") ||
		!strings.Contains(rec.Body.String(), "No page /apps/&lt;script&gt;alert(1)&lt;/script&gt;/x/y.") {
		t.Errorf("GET a path with markup = %d %q, want the 404 page with the path as text", rec.Code, rec.Body)
	}
	rec = get(t, h, "/api/v1/apps/shop/nope", testToken)
	if rec.Code != 404 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || !strings.Contains(rec.Body.String(), `"error": "no app shop/nope"`) {
		t.Errorf("GET /api/v1/apps/shop/nope = %d %s %q, want JSON", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}
