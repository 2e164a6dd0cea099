package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

const (
	testKey   = "flux-hmac-test-key"
	testToken = "api-test-token"
	rev1      = "main@sha1:2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293"
)

type testEnv struct {
	t   testing.TB
	srv *Server
	ts  *httptest.Server
	st  *store.SQL
}

// newTestEnv starts a Server on a SQLite file with fast backoff.
func newTestEnv(t testing.TB, mod func(*Config)) *testEnv {
	t.Helper()
	return newTestEnvOn(t, mod, nil)
}

// newTestEnvOn is newTestEnv with the listener wrapped by wrap, when set.
func newTestEnvOn(t testing.TB, mod func(*Config), wrap func(net.Listener) net.Listener) *testEnv {
	t.Helper()
	return newTestEnvAt(t, func(c *Config, _ string) {
		if mod != nil {
			mod(c)
		}
	}, wrap)
}

// newTestEnvAt is newTestEnvOn with mod told the server's base URL (its
// listener is open before the server is configured).
func newTestEnvAt(t testing.TB, mod func(c *Config, base string), wrap func(net.Listener) net.Listener) *testEnv {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Store: st, HMACKey: []byte(testKey), APIToken: testToken,
		Backoff:        probe.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond},
		DefaultTimeout: time.Minute, RecheckInterval: -1, StreamPoll: 50 * time.Millisecond,
	}
	mod(&cfg, base)
	srv, err := New(cfg)
	if err != nil {
		ts.Close()
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ts.Config = srv.HTTPServer()
	if wrap != nil {
		ts.Listener = wrap(ts.Listener)
	}
	ts.Start()
	t.Cleanup(func() {
		srv.BeginShutdown()
		ts.Close()
		srv.Stop()
		_ = st.Close()
	})
	return &testEnv{t: t, srv: srv, ts: ts, st: st}
}

// fixture reads testdata/events/<name>.json, applying edits when given.
func fixture(t testing.TB, name string, edits ...func(*eventv1.Event)) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "events", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) == 0 {
		return b
	}
	var ev eventv1.Event
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		e(&ev)
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func withRevision(rev string) func(*eventv1.Event) {
	return func(ev *eventv1.Event) { ev.Metadata["revision"] = rev }
}

func withApp(project, app string) func(*eventv1.Event) {
	return func(ev *eventv1.Event) {
		for _, k := range []string{"", metaPrefix} {
			if _, ok := ev.Metadata[k+"app"]; ok {
				ev.Metadata[k+"app"] = app
				ev.Metadata[k+"project"] = project
			}
		}
		ev.InvolvedObject.Name = project + "-" + app + "-web"
	}
}

// inNamespace puts the event's object in namespace ns (the Flux namespace
// of a test cluster's apps).
func inNamespace(ns string) func(*eventv1.Event) {
	return func(ev *eventv1.Event) { ev.InvolvedObject.Namespace = ns }
}

func withMessage(msg string) func(*eventv1.Event) {
	return func(ev *eventv1.Event) { ev.Message = msg }
}

// post sends a signed event.
func (e *testEnv) post(body []byte) (int, ingestResponse) {
	return e.postSigned(body, Sign([]byte(testKey), body))
}

func (e *testEnv) postSigned(body []byte, sig string) (int, ingestResponse) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.ts.URL+"/hooks/flux", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set(SignatureHeader, sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r ingestResponse
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &r); err != nil {
		e.t.Fatalf("decoding %q: %v", raw, err)
	}
	return resp.StatusCode, r
}

// mustPost sends a signed event and requires the status code.
func (e *testEnv) mustPost(body []byte, code int) ingestResponse {
	e.t.Helper()
	got, r := e.post(body)
	if got != code {
		e.t.Fatalf("POST /hooks/flux = %d %+v, want %d", got, r, code)
	}
	return r
}

// waitPhase polls until the app is in the phase, bounded by 20s.
func (e *testEnv) waitPhase(project, app string, want store.Phase) store.App {
	e.t.Helper()
	a, ok := e.waitApp(project, app, func(a store.App) bool { return a.Phase == want })
	if !ok {
		e.t.Fatalf("app %s/%s phase = %q (%s), want %q; walk %v", project, app, a.Phase, a.Message, want, e.walk(project, app))
	}
	return a
}

// waitMessage polls until the app's message is want, bounded by 20s.
func (e *testEnv) waitMessage(project, app, want string) store.App {
	e.t.Helper()
	a, ok := e.waitApp(project, app, func(a store.App) bool { return a.Message == want })
	if !ok {
		e.t.Fatalf("app %s/%s message = %q (%s), want %q", project, app, a.Message, a.Phase, want)
	}
	return a
}

// waitApp polls the app until done accepts it, for 20s at most, and
// returns the app last read.
func (e *testEnv) waitApp(project, app string, done func(store.App) bool) (store.App, bool) {
	var a store.App
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var err error
		if a, err = e.st.App(e.t.Context(), layout.AppRef{Project: project, Name: app}, ""); err == nil && done(a) {
			return a, true
		}
	}
	return a, false
}

// walk lists an app's phase changes as "from->to".
func (e *testEnv) walk(project, app string) []string {
	e.t.Helper()
	cs, err := e.st.PhaseChanges(e.t.Context(), 0, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		if c.App.Project == project && c.App.Name == app {
			out = append(out, fmt.Sprintf("%s->%s", c.From, c.To))
		}
	}
	return out
}

// api GETs an API path with the token and decodes the JSON answer into v.
func (e *testEnv) api(path string, v any) int {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.ts.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			e.t.Fatalf("GET %s: decoding %q: %v", path, raw, err)
		}
	}
	return resp.StatusCode
}
