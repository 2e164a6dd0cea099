package webhook

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "rewrite the screenshots of the status pages under docs/")

// browserSkipEnv, set to 1, lets the browser test skip when chromium is
// missing; never in CI.
const browserSkipEnv = "FLEETWRIGHT_SKIP_BROWSER"

// chromium returns the path of Debian's chromium, or skips or fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(browserSkipEnv) == "1" && os.Getenv("CI") != "true" {
		t.Skipf("chromium is not installed and %s=1: skipping the browser test (apt-get install -y chromium runs it)", browserSkipEnv)
	}
	t.Fatalf("chromium is not installed: apt-get install -y chromium (hack/test.sh does), or set %s=1 to skip this test outside CI", browserSkipEnv)
	return ""
}

// newBrowser starts headless chromium for the test, with extra options.
func newBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.Flag("hide-scrollbars", true))
	opts = append(opts, extra...)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// screenshotDir is where a failing browser test leaves its screenshots:
// $FLEETWRIGHT_SCREENSHOTS, else the test's artifact directory (kept with
// go test -artifacts).
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("FLEETWRIGHT_SCREENSHOTS"); d != "" {
		return d
	}
	return t.ArtifactDir()
}

// browse runs steps in the browser; on failure it saves a screenshot of
// the page and fails the test with what it waited for and the page's text.
func browse(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		failPage(t, ctx, what, err)
	}
}

// read runs one action that returns a value, as browse does.
func read[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		failPage(t, ctx, what, err)
	}
	return v
}

func failPage(t *testing.T, ctx context.Context, what string, err error) {
	t.Helper()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	png, _ := chromedp.Run(dctx, chromedp.FullScreenshot(90))
	loc, _ := chromedp.Run(dctx, chromedp.Location())
	text, _ := chromedp.Run(dctx, chromedp.Text(chromedp.CSS("body")))
	dir := screenshotDir(t)
	name := filepath.Join(dir, strings.NewReplacer(" ", "-", "/", "-").Replace(t.Name()+"-"+what)+".png")
	if len(png) > 0 && os.MkdirAll(dir, 0o755) == nil && os.WriteFile(name, png, 0o644) == nil {
		t.Logf("screenshot: %s", name)
	}
	t.Fatalf("%s: %v\nat %s the page reads:\n%s", what, err, loc, text)
}

// gatedChecker holds the first sync attempt of every deployment until open
// is closed, so the test sees the pending phase.
type gatedChecker struct {
	probe.Checker
	open chan struct{}
}

func (g gatedChecker) Sync(ctx context.Context, t probe.Target) (probe.Check, time.Duration) {
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	return g.Checker.Sync(ctx, t)
}

// recordPhases makes the page note every phase its #phase badge shows
// (the badge is replaced on each update) in window.fwSeen, and marks the
// document so that a reload would show.
const recordPhases = `(() => {
  window.fwMark = "same document";
  window.fwSeen = [];
  const note = () => {
    const p = document.getElementById("phase");
    const v = p ? p.textContent.trim() : "";
    if (v && window.fwSeen[window.fwSeen.length - 1] !== v) window.fwSeen.push(v);
  };
  note();
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true});
  return true;
})()`

// TestBrowserStatusPages drives the pages in headless Chromium: sign in,
// watch an app go pending → deploying → running on its page without a
// reload while real signed Flux events arrive and the test API server's
// objects change, see the live URL link appear only once the app (a real
// TLS listener) answers, and see a failed rollout show Flux's reason.
func TestBrowserStatusPages(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	a := newClusterApp(t, project, fluxNS, "api", 5*time.Minute, false)
	broken := newClusterApp(t, project, fluxNS, "broken", 5*time.Minute, false)
	pool, addr := tlsSite(t, a.host)
	gate := make(chan struct{})
	e := clusterEnv(t, fluxNS, pool, addr, func(c *Config) {
		c.Prober = gatedChecker{Checker: c.Prober, open: gate}
		c.Pages = PagesConfig{ViewerToken: testViewerToken, ClusterName: "prod", FleetRepoURL: "https://git.example.test/acme/fleet"}
	})
	base := e.ts.URL
	appPath := "/apps/" + project + "/api"

	// Signing in: the overview sends the browser to the form and back.
	browse(t, ctx, "sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), testViewerToken),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS("section#apps")),
		chromedp.WaitVisible(chromedp.CSS("#live-status.on")),
	)
	if loc := read(t, ctx, "location", chromedp.Location()); loc != base+"/" {
		t.Errorf("after signing in the browser is at %s, want %s/", loc, base)
	}

	// The first event: the app appears on the overview without a reload.
	e.mustPost(fixture(t, "kustomization-progressing", withApp(project, "api"), inNamespace(fluxNS)), 200)
	row := chromedp.CSS(`a[href="` + appPath + `"]`)
	browse(t, ctx, "the app appears on the overview",
		chromedp.WaitVisible(row),
		chromedp.Click(row),
		chromedp.WaitVisible(chromedp.ID("check-sync")),
		chromedp.Evaluate[chromedp.Void](recordPhases),
		chromedp.WaitVisible(chromedp.CSS("#live-status.on")),
	)
	phaseIs := func(want string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.getElementById("phase") && document.getElementById("phase").textContent.trim() === %q`, want),
			chromedp.WithPollingInterval(20*time.Millisecond))
	}
	noLive := func(when string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			n, err := chromedp.Evaluate[int](`document.querySelectorAll("#live-url, a.live").length`)(ctx, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			if n != 0 {
				return chromedp.Void{}, fmt.Errorf("a live URL link shows %s", when)
			}
			return chromedp.Void{}, nil
		}
	}
	browse(t, ctx, "pending", phaseIs("pending"), noLive("while pending"))

	// The checks start: Flux has not applied the revision yet.
	close(gate)
	browse(t, ctx, "deploying", phaseIs("deploying"),
		chromedp.WaitVisible(chromedp.CSS(`#check-sync[data-state="progressing"]`)), noLive("while deploying"))
	a.setSynced(t, rev1)
	browse(t, ctx, "sync passed", chromedp.WaitVisible(chromedp.CSS(`#check-sync[data-state="passed"]`)),
		phaseIs("deploying"), noLive("before the workloads are ready"))
	a.setReplicas(t, 2, 2)
	browse(t, ctx, "running",
		phaseIs("running"),
		chromedp.WaitVisible(chromedp.CSS(`#check-reachability[data-state="passed"]`)),
		chromedp.WaitVisible(chromedp.ID("live-url")),
	)
	href := read(t, ctx, "live URL", chromedp.AttributeValue(chromedp.ID("live-url"), "href"))
	if want := "https://" + a.host + "/"; href.Value != want {
		t.Errorf("live URL link = %q, want %q", href.Value, want)
	}
	seen := read(t, ctx, "phases seen", chromedp.Evaluate[[]string](`window.fwSeen`))
	if mark := read(t, ctx, "mark", chromedp.Evaluate[string](`window.fwMark || ""`)); mark != "same document" {
		t.Errorf("the page was reloaded (mark %q)", mark)
	}
	if want := []string{"pending", "deploying", "running"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("phases seen on the page = %v, want %v", seen, want)
	}

	// A failed rollout: the overview shows it live, and the app's page
	// shows Flux's reason on the sync check.
	const fluxReason = "health check failed after 20.012s: failed early due to stalled resources: [Deployment/shop/api-web status: 'Failed']"
	browse(t, ctx, "back to the overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live-status.on")))
	setKustomizationStatus(t, broken.k, "", rev1, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: meta.HealthCheckFailedReason, Message: fluxReason})
	e.mustPost(fixture(t, "kustomization-healthcheckfailed", withApp(project, "broken"), inNamespace(fluxNS)), 200)
	e.waitPhase(project, "broken", store.PhaseFailed)
	brokenRow := chromedp.CSS(`a[href="/apps/` + project + `/broken"]`)
	browse(t, ctx, "the failed app",
		chromedp.WaitVisible(brokenRow),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll(".badge.phase-failed").length > 0`),
		chromedp.Click(brokenRow),
		chromedp.WaitVisible(chromedp.CSS(`#check-sync[data-state="failed"]`)),
	)
	if reason := read(t, ctx, "the sync check's reason", chromedp.Text(chromedp.CSS("#check-sync .reason"))); !strings.Contains(reason, fluxReason) {
		t.Errorf("the failed sync check reads %q, want Flux's reason %q", reason, fluxReason)
	}
}

// screenshot saves the page at url under docs/ (for -update-screenshots).
func screenshot(t *testing.T, ctx context.Context, url, name string) {
	t.Helper()
	browse(t, ctx, "open "+name, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#live-status.on")),
		chromedp.Sleep(300*time.Millisecond))
	png := read(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	p := filepath.Join("..", "..", "docs", name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", p)
}

// TestBrowserOIDCSignIn: a person granted one project signs in through a
// real OpenID provider's login form, watches that project's app go live on
// its page, and gets nothing of another project: not its page (and the
// pods, events and logs on it), not its changes on the live stream, not
// its API.
func TestBrowserOIDCSignIn(t *testing.T) {
	t.Parallel()
	// The provider's certificate is the test's own.
	ctx := newBrowser(t, chromedp.Flag("ignore-certificate-errors", true))
	projA, projB, fluxNS := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	a := newClusterApp(t, projA, fluxNS, "api", 5*time.Minute, false)
	newClusterApp(t, projB, fluxNS, "secret", 5*time.Minute, false)
	pool, addr := tlsSite(t, a.host)
	access, err := ParseAccess("access.yaml", []byte("rules:\n  - group: team-a\n    projects: ["+projA+"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	carol := testPerson{ID: "carol-sub", Username: "carol", Password: "carol-password", Email: "carol@example.test", Groups: []string{"team-a"}}
	e := clusterEnvAt(t, fluxNS, pool, addr, func(c *Config, base string) {
		idp := startIdP(t, base+"/auth/callback", carol)
		c.Pages = PagesConfig{ClusterName: "prod", OIDC: idp.oidcConfig(base+"/auth/callback", access)}
	})
	base := e.ts.URL
	// Both projects have an app before carol comes.
	e.mustPost(fixture(t, "kustomization-progressing", withApp(projA, "api"), inNamespace(fluxNS)), 200)
	e.mustPost(fixture(t, "kustomization-progressing", withApp(projB, "secret"), inNamespace(fluxNS)), 200)
	e.waitApp(projB, "secret", func(store.App) bool { return true })

	browse(t, ctx, "sign in at the provider",
		chromedp.Navigate(base+"/apps/"+projA+"/api"),
		chromedp.WaitVisible(chromedp.ID("sso")),
		chromedp.Click(chromedp.ID("sso")),
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), carol.Username),
		chromedp.SendKeys(chromedp.ID("password"), carol.Password),
		chromedp.Click(chromedp.ID("submit")),
		chromedp.WaitVisible(chromedp.ID("check-sync")),
		chromedp.Evaluate[chromedp.Void](recordPhases),
		chromedp.WaitVisible(chromedp.CSS("#live-status.on")),
	)
	if loc := read(t, ctx, "location", chromedp.Location()); loc != base+"/apps/"+projA+"/api" {
		t.Errorf("after signing in the browser is at %s, want A's app page", loc)
	}
	phaseIs := func(want string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.getElementById("phase") && document.getElementById("phase").textContent.trim() === %q`, want),
			chromedp.WithPollingInterval(20*time.Millisecond))
	}
	// A's app goes live on its page, without a reload.
	a.setSynced(t, rev1)
	a.setReplicas(t, 2, 2)
	browse(t, ctx, "A's app running", phaseIs("running"), chromedp.WaitVisible(chromedp.ID("live-url")))
	if mark := read(t, ctx, "mark", chromedp.Evaluate[string](`window.fwMark || ""`)); mark != "same document" {
		t.Errorf("the page was reloaded (mark %q)", mark)
	}

	// Nothing of B: the overview, B's page, the stream, the API.
	browse(t, ctx, "the overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/apps/`+projA+`/api"]`)))
	if n := read(t, ctx, "B's rows", chromedp.Evaluate[int](`document.querySelectorAll('a[href^="/apps/`+projB+`/"]').length`)); n != 0 {
		t.Errorf("the overview shows %d links to B's apps", n)
	}
	if text := read(t, ctx, "the overview's text", chromedp.Text(chromedp.CSS("body"))); strings.Contains(text, projB) {
		t.Errorf("the overview names project B:\n%s", text)
	}
	browse(t, ctx, "B's app page", chromedp.Navigate(base+"/apps/"+projB+"/secret"), chromedp.WaitReady(chromedp.CSS("body")))
	if text := read(t, ctx, "B's page", chromedp.Text(chromedp.CSS("#notfound .message"))); strings.TrimSpace(text) != "No app "+projB+"/secret." {
		t.Errorf("B's app page reads %q, want the answer for no app", text)
	}
	browse(t, ctx, "back to A", chromedp.Navigate(base+"/apps/"+projA+"/api"), chromedp.WaitVisible(chromedp.CSS("#live-status.on")))
	// B's app changes while carol's stream is open: the stream from the
	// first change on sends A's changes and none of B's.
	// A forged event from A's namespace claiming B's app is stored
	// ignored and changes nothing of B.
	walkB := e.walk(projB, "secret")
	if r := e.mustPost(fixture(t, "kustomization-healthcheckfailed", withApp(projB, "secret"), inNamespace(projA)), 202); r.Status != "ignored" {
		t.Fatalf("the forged event from A's namespace = %+v, want ignored", r)
	}
	if got := e.walk(projB, "secret"); !slices.Equal(got, walkB) {
		t.Fatalf("a forged event from A's namespace moved B's app: %v, was %v", got, walkB)
	}
	posted := make(chan int, 1)
	failed := fixture(t, "kustomization-healthcheckfailed", withApp(projB, "secret"), inNamespace(fluxNS))
	go func() {
		time.Sleep(time.Second)
		code, _ := e.post(failed)
		posted <- code
	}()
	got := read(t, ctx, "the stream", chromedp.Evaluate[string](`(async () => {
  const ctl = new AbortController();
  const r = await fetch("/ui/stream?last_event_id=0", {signal: ctl.signal});
  const rd = r.body.getReader();
  let text = "";
  const stop = Date.now() + 3000;
  window.fwStreamOpen = true;
  while (Date.now() < stop) {
    const t = new Promise(res => setTimeout(() => res({timeout: true}), stop - Date.now()));
    const c = await Promise.race([rd.read(), t]);
    if (c.timeout || c.done) break;
    text += new TextDecoder().decode(c.value);
  }
  ctl.abort();
  return r.status + "\n" + text;
})()`, chromedp.EvalAwaitPromise))
	if code := <-posted; code != 200 {
		t.Fatalf("B's event = %d", code)
	}
	e.waitPhase(projB, "secret", store.PhaseFailed)
	if !strings.HasPrefix(got, "200\n") || !strings.Contains(got, `"project":"`+projA+`"`) || strings.Contains(got, projB) {
		t.Errorf("carol's stream from the first change = %q, want A's changes only", got)
	}
	api := read(t, ctx, "B's API", chromedp.Evaluate[string](`Promise.all(["/api/v1/apps/`+projB+`/secret/logs?component=web", "/api/v1/apps/`+projB+`/secret", "/api/v1/apps"].map(u => fetch(u).then(r => r.status))).then(s => s.join(","))`, chromedp.EvalAwaitPromise))
	if api != "401,401,401" {
		t.Errorf("B's logs, app and the app list from the API in carol's browser = %s, want 401 (a session is no API token)", api)
	}
}

// TestBrowserStatusNeverOverstates opens the golden pages' apps in headless
// Chromium and reads what a person sees: an app whose readiness and
// reachability were not checked is "synced; not checked", not running; a
// superseded deployment has no running badge; a failed sync step does not
// say Flux applied the revision; a deployment that failed after its rollout
// finished when it failed; the Flux object cell names the object; an
// unknown app gets the site's 404 page, with a way back.
func TestBrowserStatusNeverOverstates(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	srv, st := pageServer(t, nil)
	pageFixtures(t, st)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	base := ts.URL
	browse(t, ctx, "sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), testViewerToken),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS("section#apps")),
	)
	text := func(what, sel string) string {
		t.Helper()
		return strings.TrimSpace(read(t, ctx, what, chromedp.Text(chromedp.CSS(sel))))
	}
	count := func(what, sel string) int {
		t.Helper()
		return read(t, ctx, what, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	}

	// Not checked: on the overview and on the app's page.
	if got := text("the overview's reports row", `tr:has(a[href="/apps/billing/reports"]) .badge`); got != "synced; not checked" {
		t.Errorf("the overview shows billing/reports as %q, want synced; not checked", got)
	}
	browse(t, ctx, "billing/reports", chromedp.Navigate(base+"/apps/billing/reports"), chromedp.WaitVisible(chromedp.ID("phase")))
	if got := text("the phase badge", "#phase"); got != "synced; not checked" {
		t.Errorf("billing/reports shows %q, want synced; not checked", got)
	}
	if n := count("running badges", ".badge.phase-running"); n != 0 {
		t.Errorf("billing/reports shows %d running badges, its readiness and reachability were skipped", n)
	}
	if got := text("the readiness step", "#check-readiness .about"); !strings.HasPrefix(got, "not checked: ") {
		t.Errorf("the skipped readiness step reads %q", got)
	}
	// The Flux object names its object.
	if got := text("the Flux object", "#components tbody tr td:nth-child(3)"); got != "Kustomization/flux-system/billing-reports-web" {
		t.Errorf("the Flux object cell reads %q, want its kind, namespace and name", got)
	}

	// Superseded: the older deployment of shop/checkout was running.
	browse(t, ctx, "shop/checkout", chromedp.Navigate(base+"/apps/shop/checkout"), chromedp.WaitVisible(chromedp.ID("history")))
	if got := text("the older deployment's badge", "#history li.deployment:not(.current) .badge"); got != "superseded" {
		t.Errorf("the superseded deployment's badge reads %q", got)
	}
	if n := count("running badges", ".badge.phase-running"); n != 0 {
		t.Errorf("shop/checkout shows %d running badges while its new revision rolls out", n)
	}

	// A failed sync step.
	browse(t, ctx, "billing/invoices", chromedp.Navigate(base+"/apps/billing/invoices"), chromedp.WaitVisible(chromedp.CSS(`#check-sync[data-state="failed"]`)))
	if got := text("the sync step", "#check-sync .about"); got != "Flux did not apply the revision" {
		t.Errorf("the failed sync step reads %q", got)
	}

	// Failed after its rollout: finished when it failed.
	browse(t, ctx, "billing/ledger", chromedp.Navigate(base+"/apps/billing/ledger"), chromedp.WaitVisible(chromedp.ID("phase")))
	if got := text("Finished", ".facts div:nth-child(5) dd"); got != "2026-03-01 12:50:00Z" {
		t.Errorf("billing/ledger finished %q, want when it failed (2026-03-01 12:50:00Z)", got)
	}

	// An unknown app: the site's 404 page, and the way back.
	browse(t, ctx, "shop/nope", chromedp.Navigate(base+"/apps/shop/nope"), chromedp.WaitVisible(chromedp.ID("notfound")))
	if code := read(t, ctx, "the 404's status", chromedp.Evaluate[int](`fetch(location.href).then(r => r.status)`, chromedp.EvalAwaitPromise)); code != 404 {
		t.Errorf("the unknown app's page = %d, want 404", code)
	}
	browse(t, ctx, "back to shop's apps",
		chromedp.Click(chromedp.CSS(`#notfound a[href="/?project=shop"]`)),
		chromedp.WaitVisible(chromedp.CSS("section#apps")))
	if loc := read(t, ctx, "location", chromedp.Location()); loc != base+"/?project=shop" {
		t.Errorf("the 404 page's way back led to %s", loc)
	}
}
