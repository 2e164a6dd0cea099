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
	return map[string]any{
		"ref": ref, "task": "deploy", "auto_merge": false, "required_contexts": []any{},
		"environment": env, "description": env + " at " + rev,
		"payload": map[string]any{"project": "shop", "app": "api", "revision": rev, "spec_revision": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"},
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
