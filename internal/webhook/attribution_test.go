package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// teamEvent is an event as notification-controller forwards it, signed with
// the webhook's key, of an object a hostile team wrote in its own namespace
// "team": a HelmRelease or Kustomization its fleet or its service account
// created there, named and annotated as it likes (Flux copies the
// event.toolkit.fluxcd.io/* annotations into the metadata).
func teamEvent(t *testing.T, kind, name, severity, reason, msg string, meta map[string]string) []byte {
	t.Helper()
	api := map[string]string{"HelmRelease": "helm.toolkit.fluxcd.io/v2", "Kustomization": "kustomize.toolkit.fluxcd.io/v1",
		"OCIRepository": "source.toolkit.fluxcd.io/v1"}[kind]
	controller := map[string]string{"HelmRelease": "helm-controller", "Kustomization": "kustomize-controller",
		"OCIRepository": "source-controller"}[kind]
	ev := eventv1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "team", Name: name, APIVersion: api,
			UID: "6e1f3a2b-0c9d-4e8f-a7b6-5c4d3e2f1a0b", ResourceVersion: "812"},
		Severity: severity, Timestamp: metav1.NewTime(time.Date(2026, 3, 1, 12, 10, 0, 0, time.UTC)),
		Message: msg, Reason: reason, Metadata: meta, ReportingController: controller,
		ReportingInstance: controller + "-7d9f8c6b5-x4k2p",
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForgedEventsChangeNothing sends, as a member of team "team" would,
// signed events of the team's own objects that claim the app shop/api: a
// HelmRelease annotated with the victim's project, app and component; a
// Kustomization named like the victim's with its revision; one whose labels
// (read from the cluster) claim the victim; an OCIRepository; and the
// victim project's own Kustomization name. The victim stays running at its
// revision, its components untouched, no phase change and no GitHub
// request (the fake fails on any it does not expect); each event is stored
// as ignored with the reason.
func TestForgedEventsChangeNothing(t *testing.T) {
	t.Parallel()
	const sha = "2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293"
	fake := newFakeGitHub(t, []expectation{
		{"POST", "/repos/acme/fleet/deployments", deploymentBody(sha, "shop/api", rev1)},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "in_progress", "description": "deploying: readiness pending"}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{
			"state": "success", "environment_url": "https://api.example.test/",
			"description": "running: sync passed, readiness passed, reachability passed"}},
	})
	checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StateProgressing}}
	e := newTestEnv(t, func(c *Config) {
		c.Prober = checker
		c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo}
		// The cluster's answer for the team's Kustomization: the labels the
		// team gave it.
		c.Resolver = staticResolver{"Kustomization/team/shop-api-web": {App: layout.AppRef{Project: "shop", Name: "api"}, Component: "web"}}
	})
	// The victim's own rollout, from its Kustomization in the Flux namespace.
	e.mustPost(fixture(t, "kustomization-succeeded"), 200)
	e.waitPhase("shop", "api", store.PhaseDeploying)
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"})
	e.mustPost(fixture(t, "kustomization-succeeded", withMessage("Reconciliation finished in 1.2s, next run in 1m0s")), 200)
	before := e.waitPhase("shop", "api", store.PhaseRunning)
	fake.wait(t)
	waitGitHubState(t, e, "success")
	d0, err := e.st.Deployment(t.Context(), before.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}

	claim := map[string]string{metaPrefix + "project": "shop", metaPrefix + "app": "api", metaPrefix + "component": "db"}
	attacks := []struct {
		name   string
		body   []byte
		reason string
	}{
		{"HelmRelease annotated as the victim's", teamEvent(t, "HelmRelease", "tools", eventv1.EventSeverityError, "UpgradeFailed",
			"Helm upgrade failed for release team/tools with chart postgresql@13.4.5: context deadline exceeded",
			map[string]string{"revision": "13.4.5", "project": "shop", "app": "api", "component": "db"}),
			"HelmRelease team/tools names app shop/api but is neither in the project's namespace shop nor in the Flux namespace flux-system"},
		{"HelmRelease with the prefixed annotations", teamEvent(t, "HelmRelease", "api-db", eventv1.EventSeverityError, "InstallFailed",
			"Helm install failed", map[string]string{"revision": "13.4.5", metaPrefix + "project": "shop", metaPrefix + "app": "api", metaPrefix + "component": "db"}),
			"HelmRelease team/api-db names app shop/api"},
		{"Kustomization named like the victim's, at its revision", teamEvent(t, "Kustomization", "shop-api-web", eventv1.EventSeverityError, "HealthCheckFailed",
			"health check failed after 20.012s: timeout waiting for: [Deployment/shop/api-web status: 'InProgress']",
			map[string]string{"revision": rev1, metaPrefix + "project": "shop", metaPrefix + "app": "api", metaPrefix + "component": "web",
				metaPrefix + "spec-revision": fixtureSpec}),
			"Kustomization team/shop-api-web names app shop/api"},
		{"Kustomization whose labels claim the victim", teamEvent(t, "Kustomization", "shop-api-web", eventv1.EventSeverityError, "BuildFailed",
			"kustomize build failed", map[string]string{"revision": rev1}),
			"Kustomization team/shop-api-web names app shop/api"},
		{"OCIRepository annotated as the victim's", teamEvent(t, "OCIRepository", "shop-api-db", eventv1.EventSeverityError, "OCIArtifactPullFailed",
			"failed to pull artifact", claim),
			"OCIRepository team/shop-api-db names app shop/api"},
		{"the victim project's own Kustomization name", teamEvent(t, "Kustomization", "project-shop", eventv1.EventSeverityError, "BuildFailed",
			"kustomize build failed", map[string]string{"revision": rev1, metaPrefix + "project": "shop"}),
			"Kustomization team/project-shop names project shop but is neither in the project's namespace shop nor in the Flux namespace flux-system"},
	}
	for _, a := range attacks {
		code, r := e.post(a.body)
		if code != 202 || r.Status != "ignored" || r.Project != "" || r.App != "" || r.DeploymentID != 0 || !strings.Contains(r.Reason, a.reason) {
			t.Errorf("%s: POST = %d %+v, want 202 ignored for %q", a.name, code, r, a.reason)
		}
	}
	waitTrackerIdle(t, e)

	after, err := e.st.App(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the victim app changed:\n%+v\nwas\n%+v", after, before)
	}
	if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->running"}, e.walk("shop", "api")); diff != "" {
		t.Errorf("the victim's phase walk (-want +got):\n%s", diff)
	}
	d, err := e.st.Deployment(t.Context(), before.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d0.Components, d.Components); diff != "" {
		t.Errorf("the victim's components (-before +after):\n%s", diff)
	}
	if d.GitHubState != "success" {
		t.Errorf("GitHub state = %q, want success", d.GitHubState)
	}
	evs, err := e.st.Events(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Errorf("the victim's events = %d, want its own 2: %+v", len(evs), evs)
	}
	ign, err := e.st.Events(t.Context(), layout.AppRef{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ign) != len(attacks) {
		t.Fatalf("ignored events = %d, want %d: %+v", len(ign), len(attacks), ign)
	}
	for i, ev := range ign {
		a := attacks[len(attacks)-1-i] // newest first
		if ev.Status != store.EventIgnored || ev.Namespace != "team" || !strings.Contains(ev.IgnoredReason, a.reason) {
			t.Errorf("%s stored as %+v", a.name, ev)
		}
	}
	e.srv.tracker.mu.Lock()
	_, woke := e.srv.tracker.projectHealth["shop"]
	e.srv.tracker.mu.Unlock()
	if woke {
		t.Error("the team's project-shop Kustomization reached the tracker as the shop project's own")
	}
}

// waitTrackerIdle waits until the tracker has handled every notice and
// ended every run, and stays so for a while (a notice becomes a run on
// the tracker's goroutine).
func waitTrackerIdle(t *testing.T, e *testEnv) {
	t.Helper()
	idleSince := time.Time{}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		tr := e.srv.tracker
		tr.mu.Lock()
		idle := len(tr.queue) == 0 && len(tr.runs) == 0 && len(tr.signal) == 0
		tr.mu.Unlock()
		switch {
		case !idle:
			idleSince = time.Time{}
		case idleSince.IsZero():
			idleSince = time.Now()
		case time.Since(idleSince) > 300*time.Millisecond:
			return
		}
	}
	t.Fatal("the tracker never went idle")
}

// TestOwnEventsStillCount checks the events that may speak for shop/api:
// its Kustomization and OCIRepository render wrote in the Flux namespace,
// its HelmRelease in its namespace, and its Kustomization in its namespace
// (where render puts each project's Flux objects).
func TestOwnEventsStillCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body []byte
	}{
		{"Kustomization in the Flux namespace", fixture(t, "kustomization-progressing")},
		{"OCIRepository in the Flux namespace", fixture(t, "ocirepository-newartifact", withRevision(rev1))},
		{"HelmRelease in the project's namespace", fixture(t, "helmrelease-installsucceeded")},
		{"Kustomization in the project's namespace", fixture(t, "kustomization-progressing", inNamespace("shop"))},
		{"Kustomization named for any component", fixture(t, "kustomization-progressing", func(ev *eventv1.Event) {
			delete(ev.Metadata, metaPrefix+"component")
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, nil)
			r := e.mustPost(tc.body, 200)
			if r.Status != "applied" || r.Project != "shop" || r.App != "api" || r.DeploymentID == 0 {
				t.Errorf("answer = %+v", r)
			}
		})
	}
}

// TestAttribution checks which objects may speak for the app or project
// their annotations or labels name.
func TestAttribution(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: Config{FluxNamespace: "flux-system"}}
	obj := func(kind, ns, name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name}
	}
	tests := []struct {
		obj                     *corev1.ObjectReference
		project, app, component string
		want                    string // part of the reason; "" when it may
	}{
		// In the project's namespace: anything.
		{obj("HelmRelease", "shop", "api-db"), "shop", "api", "db", ""},
		{obj("Kustomization", "shop", "shop-api-web"), "shop", "api", "web", ""},
		{obj("Kustomization", "shop", "project-shop"), "shop", "", "", ""},
		// In the Flux namespace: render's names for the claim.
		{obj("Kustomization", "flux-system", "shop-api-web"), "shop", "api", "web", ""},
		{obj("OCIRepository", "flux-system", "shop-api-web"), "shop", "api", "web", ""},
		{obj("Kustomization", "flux-system", "shop-api-web"), "shop", "api", "", ""},
		{obj("Kustomization", "flux-system", "project-shop"), "shop", "", "", ""},
		{obj("OCIRepository", "flux-system", "project-shop"), "shop", "", "", ""},
		{obj("Kustomization", "flux-system", "shop-api-web"), "shop", "api", "db", "render names that one shop-api-db"},
		{obj("Kustomization", "flux-system", "shop-api"), "shop", "api", "", "render names that one shop-api"},
		{obj("Kustomization", "flux-system", "infra"), "shop", "api", "web", "render names that one shop-api-web"},
		{obj("Kustomization", "flux-system", "project-cart"), "shop", "", "", "render names that one project-shop"},
		{obj("HelmRelease", "flux-system", "shop-api-web"), "shop", "api", "web", "only a Kustomization or OCIRepository"},
		{obj("GitRepository", "flux-system", "project-shop"), "shop", "", "", "only a Kustomization or OCIRepository"},
		// Anywhere else: nothing.
		{obj("HelmRelease", "team", "api-db"), "shop", "api", "db", "neither in the project's namespace shop nor in the Flux namespace flux-system"},
		{obj("Kustomization", "team", "shop-api-web"), "shop", "api", "web", "neither"},
		{obj("Kustomization", "team", "project-shop"), "shop", "", "", "names project shop but"},
		{obj("Kustomization", "", "shop-api-web"), "shop", "api", "web", "neither"},
		{obj("Kustomization", "shop-api", "x"), "shop", "api", "web", "neither"},
		{obj("HelmRelease", "team", strings.Repeat("x", 300)), "shop", "api", "db", strings.Repeat("x", 100) + "…"},
	}
	for _, tc := range tests {
		got := s.attribution(tc.obj, layout.AppRef{Project: tc.project, Name: tc.app}, tc.component, "")
		switch {
		case tc.want == "" && got != "":
			t.Errorf("attribution(%s %s/%s, %s/%s/%s) = %q, want it to count", tc.obj.Kind, tc.obj.Namespace, tc.obj.Name, tc.project, tc.app, tc.component, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("attribution(%s %s/%s, %s/%s/%s) = %q, want %q", tc.obj.Kind, tc.obj.Namespace, tc.obj.Name, tc.project, tc.app, tc.component, got, tc.want)
		}
		if len(got) > 400 {
			t.Errorf("reason of %d bytes", len(got))
		}
	}
}
