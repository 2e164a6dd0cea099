package webhook

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// expectation is one request the fake GitHub API expects, in order, with
// its exact JSON body.
type expectation struct {
	method, path string
	body         map[string]any
}

// fleetRepo is the repository that gets the deployments in the tests.
var fleetRepo = github.Repo{Owner: "acme", Name: "fleet"}

// fakeGitHub is GitHub's API (githubtest's strict fake) expecting the
// requests of a test, and a client of it.
type fakeGitHub struct {
	*githubtest.Server
	client *github.Client
	want   []expectation
}

// newFakeGitHub starts a fake GitHub API that answers only the expected
// requests, checks each one's body and the token, and fails the test on
// any other request or an expected one that was not made.
func newFakeGitHub(t *testing.T, want []expectation) *fakeGitHub {
	srv := githubtest.New(t, githubtest.WithToken("gh-token"))
	for _, e := range want {
		srv.Expect(e.method, e.path).JSONBody(e.body)
	}
	c, err := github.New(github.Config{BaseURL: srv.URL, Token: "gh-token", HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return &fakeGitHub{Server: srv, client: c, want: want}
}

// wait waits until GitHub holds every expected deployment and status: a
// status posted on another deployment than the one created is not held.
func (f *fakeGitHub) wait(t *testing.T) {
	t.Helper()
	var wantDeps, wantStatuses int
	for _, e := range f.want {
		if strings.HasSuffix(e.path, "/statuses") {
			wantStatuses++
		} else {
			wantDeps++
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		deps := f.Deployments(fleetRepo.String())
		statuses := 0
		for _, d := range deps {
			statuses += len(d.Statuses)
		}
		if len(deps) == wantDeps && statuses == wantStatuses {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GitHub holds %d deployments with %d statuses, want %d with %d; requests: %v",
				len(deps), statuses, wantDeps, wantStatuses, f.Requests())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func deploymentBody(ref, env, rev string) map[string]any {
	return deploymentBodySpec(ref, env, rev, fixtureSpec)
}

func deploymentBodySpec(ref, env, rev, spec string) map[string]any {
	return map[string]any{
		"ref": ref, "task": "deploy", "auto_merge": false, "required_contexts": []any{},
		"environment": env, "description": env + " at " + rev,
		"payload": map[string]any{"project": "shop", "app": "api", "revision": rev, "spec_revision": spec},
	}
}

// TestGitHubWaitsForSpecRevision checks that with a cluster the GitHub
// deployment is created only once the cluster confirmed the spec revision,
// with that revision as its ref, not the one the first event carried.
func TestGitHubWaitsForSpecRevision(t *testing.T) {
	t.Parallel()
	const spec2 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	fake := newFakeGitHub(t, []expectation{
		{"POST", "/repos/acme/fleet/deployments", deploymentBodySpec(spec2, "shop/api", rev1, spec2)},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "in_progress", "description": "deploying: readiness pending"}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{
			"state": "success", "environment_url": "https://api.example.test/",
			"description": "running: sync passed, readiness passed, reachability passed"}},
	})
	checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StateProgressing, noSpec: true}}
	e := newTestEnv(t, func(c *Config) {
		c.Prober = checker
		c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo, UseSpecRevision: true}
	})
	// The first event names the previous revision's spec (fixtureSpec).
	e.mustPost(fixture(t, "kustomization-progressing"), 200)
	a := e.waitPhase("shop", "api", store.PhaseDeploying)
	if a.SpecRevision != fixtureSpec {
		t.Errorf("spec revision = %q, want the event's until the cluster says", a.SpecRevision)
	}
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StateProgressing, reach: probe.StatePending, spec: spec2})
	e.mustPost(fixture(t, "kustomization-succeeded"), 200)
	deadline := time.Now().Add(20 * time.Second)
	for a.SpecRevision != spec2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		a, _ = e.st.App(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, "")
	}
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/", spec: spec2})
	a = e.waitPhase("shop", "api", store.PhaseRunning)
	fake.wait(t)
	waitGitHubState(t, e, "success")
	d, err := e.st.Deployment(t.Context(), a.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	if a.SpecRevision != spec2 || d.SpecRevision != spec2 {
		t.Errorf("spec revision of the app %q, of the deployment %q; want %q", a.SpecRevision, d.SpecRevision, spec2)
	}
}

// TestGitHubFluxReasonAfterTimeout checks that when the webhook's timeout
// fails a deployment before Flux does, Flux's verdict then becomes the
// deployment's reason, on the app and on GitHub, without another phase.
func TestGitHubFluxReasonAfterTimeout(t *testing.T) {
	t.Parallel()
	const sha = "2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293"
	progressing := "sync: web: Progressing: Deployment/shop/api-web configured\nService/shop/api-web unchanged\nIngress/shop/api-web configured"
	timedOut := "timeout (300ms) passed before every check was green: " + progressing
	flux := "sync check failed: web: HealthCheckFailed: health check failed after 20.012s: failed early due to stalled resources: [Deployment/shop/api-web status: 'Failed']"
	fake := newFakeGitHub(t, []expectation{
		{"POST", "/repos/acme/fleet/deployments", deploymentBody(sha, "shop/api", rev1)},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "in_progress", "description": truncate("deploying: "+progressing, 140)}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "failure", "description": truncate("failed: "+timedOut, 140)}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "failure", "description": truncate("failed: "+flux, 140)}},
	})
	e := newTestEnv(t, func(c *Config) {
		c.DefaultTimeout = 300 * time.Millisecond
		c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo}
	})
	e.mustPost(fixture(t, "kustomization-progressing"), 200)
	if a := e.waitPhase("shop", "api", store.PhaseFailed); a.Message != timedOut {
		t.Errorf("message = %q, want %q", a.Message, timedOut)
	}
	e.mustPost(fixture(t, "kustomization-healthcheckfailed"), 200)
	e.waitMessage("shop", "api", flux)
	fake.wait(t)
	if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->failed"}, e.walk("shop", "api")); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	ds, err := e.st.Deployments(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Message != flux || ds[0].Phase != store.PhaseFailed || ds[0].GitHubState != "failure" {
		t.Errorf("deployments = %+v", ds)
	}
}

func TestGitHubDeploymentStatuses(t *testing.T) {
	t.Parallel()
	const sha = "2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293"
	t.Run("success with environment url", func(t *testing.T) {
		t.Parallel()
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
		})
		e.mustPost(fixture(t, "kustomization-succeeded"), 200)
		e.waitPhase("shop", "api", store.PhaseDeploying)
		checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"})
		e.mustPost(fixture(t, "kustomization-succeeded", withMessage("Reconciliation finished in 1.2s, next run in 1m0s")), 200)
		e.waitPhase("shop", "api", store.PhaseRunning)
		fake.wait(t)
		waitGitHubState(t, e, "success")
	})
	t.Run("failure with reason", func(t *testing.T) {
		t.Parallel()
		fake := newFakeGitHub(t, []expectation{
			{"POST", "/repos/acme/fleet/deployments", deploymentBody("9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", "shop/api", rev1)},
			{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{
				"state": "failure", "description": truncate("failed: sync check failed: web: BuildFailed: kustomize build failed: accumulating resources: accumulation err='accumulating resources from 'deployment-api-web.yaml': missing metadata.name in object {{apps/v1 Deployment} {{ } map[] map[]}}'", 140)}},
		})
		e := newTestEnv(t, func(c *Config) {
			c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo, UseSpecRevision: true}
		})
		e.mustPost(fixture(t, "kustomization-buildfailed"), 200)
		e.waitPhase("shop", "api", store.PhaseFailed)
		fake.wait(t)
		waitGitHubState(t, e, "failure")
	})
}

// TestGitHubRetriesServerErrors checks that a status GitHub answers with a
// server error is sent again, and one it refuses is not.
func TestGitHubRetriesServerErrors(t *testing.T) {
	t.Parallel()
	const sha = "2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293"
	reason := truncate("failed: sync check failed: web: BuildFailed: kustomize build failed: accumulating resources: accumulation err='accumulating resources from 'deployment-api-web.yaml': missing metadata.name in object {{apps/v1 Deployment} {{ } map[] map[]}}'", 140)
	status := map[string]any{"state": "failure", "description": reason}
	t.Run("server error", func(t *testing.T) {
		t.Parallel()
		fake := newFakeGitHub(t, []expectation{{"POST", "/repos/acme/fleet/deployments", deploymentBody(sha, "shop/api", rev1)}})
		// Registered first, so the first status request gets the 502.
		fake.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").JSONBody(status).
			Respond(http.StatusBadGateway, map[string]any{"message": "Server Error"})
		fake.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").JSONBody(status)
		fake.want = append(fake.want, expectation{"POST", "/repos/acme/fleet/deployments/*/statuses", status})
		e := newTestEnv(t, func(c *Config) { c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo} })
		e.mustPost(fixture(t, "kustomization-buildfailed"), 200)
		e.waitPhase("shop", "api", store.PhaseFailed)
		fake.wait(t)
		waitGitHubState(t, e, "failure")
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		fake := newFakeGitHub(t, []expectation{{"POST", "/repos/acme/fleet/deployments", deploymentBody(sha, "shop/api", rev1)}})
		fake.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").JSONBody(status).
			Respond(http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
		e := newTestEnv(t, func(c *Config) { c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo} })
		e.mustPost(fixture(t, "kustomization-buildfailed"), 200)
		e.waitPhase("shop", "api", store.PhaseFailed)
		fake.wait(t)
		// The deployment is recorded, its state is not.
		deadline := time.Now().Add(10 * time.Second)
		for len(fake.Requests()) < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		// A retry would come 500ms after the refusal (and be unexpected).
		time.Sleep(700 * time.Millisecond)
		a, err := e.st.App(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, "")
		if err != nil {
			t.Fatal(err)
		}
		d, err := e.st.Deployment(t.Context(), a.DeploymentID)
		if err != nil || d.GitHubID == 0 || d.GitHubState != "" {
			t.Errorf("deployment = %+v, %v; want a GitHub deployment without a state", d, err)
		}
	})
}

func waitGitHubState(t *testing.T, e *testEnv, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		a, err := e.st.App(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, "")
		if err == nil {
			d, err := e.st.Deployment(t.Context(), a.DeploymentID)
			if err == nil && d.GitHubState == want && d.GitHubID != 0 {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("GitHub state never became %q", want)
}

// switchChecker is a fakeChecker whose answers a test changes.
type switchChecker struct {
	mu sync.Mutex
	fakeChecker
}

func (s *switchChecker) set(f fakeChecker) {
	s.mu.Lock()
	s.fakeChecker = f
	s.mu.Unlock()
}

func (s *switchChecker) get() fakeChecker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fakeChecker
}

func (s *switchChecker) Sync(ctx context.Context, t probe.Target) (probe.Check, time.Duration) {
	return s.get().Sync(ctx, t)
}

func (s *switchChecker) Readiness(ctx context.Context, t probe.Target) (probe.Check, bool) {
	return s.get().Readiness(ctx, t)
}

func (s *switchChecker) Reachability(ctx context.Context, t probe.Target) (probe.Check, string) {
	return s.get().Reachability(ctx, t)
}

func TestCommitOf(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"main@sha1:abc":    "abc",
		"sha256:def":       "def",
		"v1.2.3@sha256:01": "01",
		"13.4.4":           "13.4.4",
	} {
		if got := commitOf(in); got != want {
			t.Errorf("commitOf(%q) = %q, want %q", in, got, want)
		}
	}
	if got := truncate(strings.Repeat("é", 150), 140); len([]rune(got)) != 140 {
		t.Errorf("truncate kept %d runes", len([]rune(got)))
	}
}
