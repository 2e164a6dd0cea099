package webhook

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

func TestAPIAuth(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	tests := []struct {
		name, header string
		want         int
	}{
		{"no token", "", 401},
		{"wrong token", "Bearer nope", 401},
		{"basic auth", "Basic " + testToken, 401},
		{"right token", "Bearer " + testToken, 200},
		{"extra spaces", "Bearer  " + testToken + " ", 401},
		{"tab", "Bearer\t" + testToken, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodGet, e.ts.URL+"/api/v1/apps", nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	off := newTestEnv(t, func(c *Config) { c.APIToken = "" })
	var body errorBody
	if code := off.api("/api/v1/apps", &body); code != 503 || !strings.Contains(body.Error, "no API token") {
		t.Errorf("API without token = %d %q", code, body.Error)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	e.mustPost(fixture(t, "gitrepository-newartifact"), 202)
	e.postSigned(fixture(t, "kustomization-progressing"), "sha256=00")
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(e.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s = %d", p, resp.StatusCode)
		}
	}
	resp, err := http.Get(e.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "fleetwright_webhook_events_received_total{") {
			lines = append(lines, sc.Text())
		}
	}
	want := []string{
		`fleetwright_webhook_events_received_total{result="ignored"} 1`,
		`fleetwright_webhook_events_received_total{result="unauthorized"} 1`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	e.srv.BeginShutdown()
	resp, err = http.Get(e.ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("/readyz while shutting down = %d, want 503", resp.StatusCode)
	}
}

// fixtureSpec is the spec revision the event fixtures carry.
const fixtureSpec = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"

// fakeChecker answers every check with fixed results. Its sync check reads
// the spec revision spec (default fixtureSpec) from the cluster, or none with
// noSpec.
type fakeChecker struct {
	sync, ready, reach probe.State
	live               string
	paused             bool
	spec               string
	noSpec             bool
}

func (f fakeChecker) Sync(context.Context, probe.Target) (probe.Check, time.Duration) {
	spec := cmpOr(f.spec, fixtureSpec)
	if f.noSpec {
		spec = ""
	}
	return probe.Check{Name: probe.CheckSync, State: f.sync, Message: "sync " + string(f.sync),
		Components: []probe.ComponentStatus{{Component: "web", Kind: "Kustomization", Name: "shop-api-web", State: f.sync, SpecRevision: spec}}}, 0
}

func (f fakeChecker) Readiness(context.Context, probe.Target) (probe.Check, bool) {
	return probe.Check{Name: probe.CheckReadiness, State: f.ready, Message: "ready " + string(f.ready),
		Components: []probe.ComponentStatus{{Component: "web", Kind: "Deployment", Name: "api-web", State: f.ready}}}, f.paused
}

func (f fakeChecker) Reachability(context.Context, probe.Target) (probe.Check, string) {
	return probe.Check{Name: probe.CheckReachability, State: f.reach, Message: "reach " + string(f.reach)}, f.live
}

func TestAPIAppsAndDeployments(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) {
		c.Prober = fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"}
	})
	var revs []string
	for i := range 3 {
		rev := fmt.Sprintf("main@sha1:%040d", i+1)
		revs = append(revs, rev)
		e.mustPost(fixture(t, "kustomization-succeeded", withRevision(rev)), 200)
		a := e.waitPhase("shop", "api", store.PhaseRunning)
		if a.Revision != rev {
			// The phase may still be the previous revision's: wait for this one.
			for a.Revision != rev {
				time.Sleep(5 * time.Millisecond)
				a = e.waitPhase("shop", "api", store.PhaseRunning)
			}
		}
	}
	e.mustPost(fixture(t, "kustomization-progressing", withApp("shop", "cart")), 200)

	var apps struct{ Apps []store.App }
	if code := e.api("/api/v1/apps", &apps); code != 200 {
		t.Fatalf("apps = %d", code)
	}
	var names []string
	for _, a := range apps.Apps {
		names = append(names, a.Project+"/"+a.Name)
	}
	if diff := cmp.Diff([]string{"shop/api", "shop/cart"}, names); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}

	var st AppStatus
	if code := e.api("/api/v1/apps/shop/api", &st); code != 200 {
		t.Fatalf("app = %d", code)
	}
	if st.Phase != store.PhaseRunning || st.LiveURL != "https://api.example.test/" || st.Sync.State != probe.StatePassed ||
		st.Sync.Revision != revs[2] || st.Deployment.Revision != revs[2] {
		t.Errorf("app status = %+v", st)
	}
	if len(st.Components) != 1 || st.Components[0].Name != "web" || st.Components[0].Health != store.HealthHealthy ||
		len(st.Components[0].Sync) != 1 || len(st.Components[0].Workloads) != 1 || st.Components[0].Flux == nil {
		t.Errorf("components = %+v", st.Components)
	}

	var ds DeployStatus
	if code := e.api("/api/v1/apps/shop/api/deploy-status", &ds); code != 200 {
		t.Fatalf("deploy-status = %d", code)
	}
	var checks []string
	for _, c := range ds.Checks {
		checks = append(checks, c.Name+"="+string(c.State))
	}
	if diff := cmp.Diff([]string{"sync=passed", "readiness=passed", "reachability=passed"}, checks); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}

	// Pages of two, newest first.
	type page struct {
		Deployments []DeploymentView `json:"deployments"`
		NextCursor  string           `json:"next_cursor"`
	}
	var got []string
	path := "/api/v1/apps/shop/api/deployments?limit=2"
	for range 3 {
		var p page
		if code := e.api(path, &p); code != 200 {
			t.Fatalf("%s = %d", path, code)
		}
		for _, d := range p.Deployments {
			got = append(got, d.Revision)
			if d.Checks.Check(probe.CheckSync).State != probe.StatePassed {
				t.Errorf("deployment %d checks = %+v", d.ID, d.Checks)
			}
		}
		if p.NextCursor == "" {
			break
		}
		path = "/api/v1/apps/shop/api/deployments?limit=2&cursor=" + p.NextCursor
	}
	if diff := cmp.Diff([]string{revs[2], revs[1], revs[0]}, got); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}

	errs := []struct {
		path string
		code int
	}{
		{"/api/v1/apps/shop/nope", 404},
		{"/api/v1/apps/shop/nope/deployments", 404},
		{"/api/v1/apps/shop/nope/deploy-status", 404},
		{"/api/v1/apps/shop/api/deployments?limit=0", 400},
		{"/api/v1/apps/shop/api/deployments?cursor=bogus", 400},
		{"/api/v1/apps/shop/api/pods", 503},
		{"/api/v1/apps/shop/api/logs?component=web", 503},
		{"/api/v1/stream?last_event_id=x", 400},
	}
	for _, tc := range errs {
		var body errorBody
		if code := e.api(tc.path, &body); code != tc.code || body.Error == "" {
			t.Errorf("GET %s = %d %q, want %d with an error", tc.path, code, body.Error, tc.code)
		}
	}

	var evs struct{ Events []EventView }
	if code := e.api("/api/v1/apps/shop/api/events", &evs); code != 200 || len(evs.Events) != 3 || evs.Events[0].Source != "flux" {
		t.Errorf("events = %d %+v", code, evs)
	}
}

func TestPausedAndTimeout(t *testing.T) {
	t.Parallel()
	t.Run("paused", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t, func(c *Config) {
			c.Prober = fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StateProgressing, paused: true}
		})
		e.mustPost(fixture(t, "kustomization-succeeded"), 200)
		e.waitPhase("shop", "api", store.PhasePaused)
		var ds DeployStatus
		e.api("/api/v1/apps/shop/api/deploy-status", &ds)
		if ds.Checks[2].State != probe.StateSkipped {
			t.Errorf("reachability while paused = %+v", ds.Checks[2])
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t, func(c *Config) {
			c.DefaultTimeout = 200 * time.Millisecond
			c.Prober = fakeChecker{sync: probe.StatePassed, ready: probe.StateProgressing, reach: probe.StatePending}
		})
		e.mustPost(fixture(t, "kustomization-succeeded"), 200)
		a := e.waitPhase("shop", "api", store.PhaseFailed)
		if !strings.Contains(a.Message, "timeout (200ms) passed before every check was green: readiness: ready progressing") {
			t.Errorf("message = %q", a.Message)
		}
		if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->failed"}, e.walk("shop", "api")); diff != "" {
			t.Errorf("walk (-want +got):\n%s", diff)
		}
	})
}

// sseEvent is one event read from the stream.
type sseEvent struct {
	id   int64
	data string
}

// readSSE reads n events from an open stream.
func readSSE(t *testing.T, sc *bufio.Scanner, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id, err := strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			cur.id = id
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.id != 0:
			out = append(out, cur)
			cur = sseEvent{}
		}
	}
	if len(out) < n {
		t.Fatalf("stream ended after %d events, want %d: %v", len(out), n, sc.Err())
	}
	return out
}

func openStream(t *testing.T, e *testEnv, lastID string) (*bufio.Scanner, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.ts.URL+"/api/v1/stream", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return bufio.NewScanner(resp.Body), func() { cancel(); resp.Body.Close() }
}

func TestStreamOrderAndResume(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	sc, closeStream := openStream(t, e, "")
	defer closeStream()
	// Two apps walk their phases concurrently.
	apps := []string{"api", "cart", "shop"}
	for _, app := range apps {
		e.mustPost(fixture(t, "kustomization-progressing", withApp("acme", app)), 200)
	}
	for _, app := range apps {
		e.waitPhase("acme", app, store.PhaseDeploying)
		e.mustPost(fixture(t, "kustomization-succeeded", withApp("acme", app)), 200)
	}
	for _, app := range apps {
		e.waitPhase("acme", app, store.PhaseRunning)
	}
	all, err := e.st.PhaseChanges(t.Context(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 9 {
		t.Fatalf("phase changes = %d, want 9", len(all))
	}
	got := readSSE(t, sc, len(all))
	for i, ev := range got {
		if ev.id != all[i].Seq {
			t.Errorf("event %d has id %d, want %d (in order, each once)", i, ev.id, all[i].Seq)
		}
		if !strings.Contains(ev.data, fmt.Sprintf(`"to":"%s"`, all[i].To)) || !strings.Contains(ev.data, `"app":"`+all[i].App.Name+`"`) {
			t.Errorf("event %d data = %s, want change %+v", i, ev.data, all[i])
		}
	}
	// Reconnecting with Last-Event-ID replays exactly what followed it.
	sc2, close2 := openStream(t, e, strconv.FormatInt(all[3].Seq, 10))
	defer close2()
	rest := readSSE(t, sc2, len(all)-4)
	for i, ev := range rest {
		if ev.id != all[4+i].Seq {
			t.Errorf("resumed event %d has id %d, want %d", i, ev.id, all[4+i].Seq)
		}
	}
}
