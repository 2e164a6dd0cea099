package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// expectation is one request the fake GitHub API expects, in order.
type expectation struct {
	method, path string
	body         map[string]any
	reply        string
}

// fakeGitHub answers only the expected requests, in order, and fails the
// test on anything else.
type fakeGitHub struct {
	t    *testing.T
	mu   sync.Mutex
	want []expectation
	got  int
	done chan struct{}
}

func newFakeGitHub(t *testing.T, want []expectation) (*fakeGitHub, *httptest.Server) {
	f := &fakeGitHub{t: t, want: want, done: make(chan struct{})}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	return f, ts
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.got >= len(f.want) {
		f.t.Errorf("unexpected GitHub request %s %s", r.Method, r.URL.Path)
		http.Error(w, "unexpected", http.StatusTeapot)
		return
	}
	exp := f.want[f.got]
	f.got++
	if f.got == len(f.want) {
		close(f.done)
	}
	if r.Method != exp.method || r.URL.Path != exp.path {
		f.t.Errorf("GitHub request %d = %s %s, want %s %s", f.got, r.Method, r.URL.Path, exp.method, exp.path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer gh-token" {
		f.t.Errorf("Authorization = %q", got)
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("request body %q: %v", raw, err)
	}
	if diff := cmp.Diff(exp.body, body); diff != "" {
		f.t.Errorf("GitHub request %d %s body (-want +got):\n%s", f.got, exp.path, diff)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprint(w, exp.reply)
}

func (f *fakeGitHub) wait(t *testing.T) {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(20 * time.Second):
		f.mu.Lock()
		defer f.mu.Unlock()
		t.Fatalf("GitHub got %d of %d expected requests", f.got, len(f.want))
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
	fake, ts := newFakeGitHub(t, []expectation{
		{"POST", "/repos/acme/fleet/deployments", deploymentBodySpec(spec2, "shop/api", rev1, spec2), `{"id": 5}`},
		{"POST", "/repos/acme/fleet/deployments/5/statuses", map[string]any{"state": "in_progress", "description": "deploying: readiness pending"}, `{"id": 1}`},
		{"POST", "/repos/acme/fleet/deployments/5/statuses", map[string]any{
			"state": "success", "environment_url": "https://api.example.test/",
			"description": "running: sync passed, readiness passed, reachability passed"}, `{"id": 2}`},
	})
	checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StateProgressing, noSpec: true}}
	e := newTestEnv(t, func(c *Config) {
		c.Prober = checker
		c.GitHub = &GitHub{Token: "gh-token", Owner: "acme", Repo: "fleet", BaseURL: ts.URL, UseSpecRevision: true}
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
		a, _ = e.st.App(t.Context(), "shop", "api")
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
	fake, ts := newFakeGitHub(t, []expectation{
		{"POST", "/repos/acme/fleet/deployments", deploymentBody(sha, "shop/api", rev1), `{"id": 9}`},
		{"POST", "/repos/acme/fleet/deployments/9/statuses", map[string]any{"state": "in_progress", "description": truncate("deploying: "+progressing, 140)}, `{"id": 1}`},
		{"POST", "/repos/acme/fleet/deployments/9/statuses", map[string]any{"state": "failure", "description": truncate("failed: "+timedOut, 140)}, `{"id": 2}`},
		{"POST", "/repos/acme/fleet/deployments/9/statuses", map[string]any{"state": "failure", "description": truncate("failed: "+flux, 140)}, `{"id": 3}`},
	})
	e := newTestEnv(t, func(c *Config) {
		c.DefaultTimeout = 300 * time.Millisecond
		c.GitHub = &GitHub{Token: "gh-token", Owner: "acme", Repo: "fleet", BaseURL: ts.URL}
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
	ds, err := e.st.Deployments(t.Context(), "shop", "api", 10, 0)
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
		fake, ts := newFakeGitHub(t, []expectation{
			{"POST", "/repos/acme/fleet/deployments", deploymentBody(sha, "shop/api", rev1), `{"id": 41}`},
			{"POST", "/repos/acme/fleet/deployments/41/statuses", map[string]any{"state": "in_progress", "description": "deploying: readiness pending"}, `{"id": 1}`},
			{"POST", "/repos/acme/fleet/deployments/41/statuses", map[string]any{
				"state": "success", "environment_url": "https://api.example.test/",
				"description": "running: sync passed, readiness passed, reachability passed"}, `{"id": 2}`},
		})
		checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StateProgressing}}
		e := newTestEnv(t, func(c *Config) {
			c.Prober = checker
			c.GitHub = &GitHub{Token: "gh-token", Owner: "acme", Repo: "fleet", BaseURL: ts.URL}
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
		fake, ts := newFakeGitHub(t, []expectation{
			{"POST", "/repos/acme/fleet/deployments", deploymentBody("9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", "shop/api", rev1), `{"id": 7}`},
			{"POST", "/repos/acme/fleet/deployments/7/statuses", map[string]any{
				"state": "failure", "description": truncate("failed: sync check failed: web: BuildFailed: kustomize build failed: accumulating resources: accumulation err='accumulating resources from 'deployment-api-web.yaml': missing metadata.name in object {{apps/v1 Deployment} {{ } map[] map[]}}'", 140)}, `{"id": 1}`},
		})
		e := newTestEnv(t, func(c *Config) {
			c.GitHub = &GitHub{Token: "gh-token", Owner: "acme", Repo: "fleet", BaseURL: ts.URL, UseSpecRevision: true}
		})
		e.mustPost(fixture(t, "kustomization-buildfailed"), 200)
		e.waitPhase("shop", "api", store.PhaseFailed)
		fake.wait(t)
		waitGitHubState(t, e, "failure")
	})
}

func waitGitHubState(t *testing.T, e *testEnv, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		a, err := e.st.App(t.Context(), "shop", "api")
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
