package webhook

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// slowPost opens a connection that announces a body of length bytes and
// sends only its first byte.
func slowPost(t *testing.T, addr string, length int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := fmt.Fprintf(c, "POST /hooks/flux HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s: sha256=00\r\n\r\n{", length, SignatureHeader); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedWithin reports whether the server closes c within d (reading
// whatever it answers first).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return err == nil || !errors.As(err, &ne) || !ne.Timeout()
}

func addrOf(e *testEnv) string { return strings.TrimPrefix(e.ts.URL, "http://") }

// TestSlowBodyIsCutOff checks the read timeout: a client that trickles its
// body loses its connection.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	c := slowPost(t, addrOf(e), 100000)
	if !closedWithin(c, 3*time.Second) {
		t.Error("a connection trickling its body is still open after 3s with a 300ms read timeout")
	}
}

// TestIdleConnectionIsClosed checks the idle timeout of keep-alive connections.
func TestIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) { c.IdleTimeout = 200 * time.Millisecond })
	c, err := net.Dial("tcp", addrOf(e))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Close {
		t.Fatal("the server did not keep the connection alive")
	}
	if !closedWithin(c, 3*time.Second) {
		t.Error("an idle keep-alive connection is still open after 3s with a 200ms idle timeout")
	}
}

// TestBodyBudgetFull checks that once the unauthenticated bodies in flight
// hold the budget, an event is answered 503 with Retry-After at once, and
// that signed events are taken again once they are gone.
func TestBodyBudgetFull(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) { c.MaxPendingBodyBytes = 2 * bodyChunk })
	slow := []net.Conn{slowPost(t, addrOf(e), 100000), slowPost(t, addrOf(e), 100000)}
	body := fixture(t, "kustomization-progressing")
	deadline := time.Now().Add(5 * time.Second)
	for {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, e.ts.URL+"/hooks/flux", strings.NewReader(string(body)))
		req.Header.Set(SignatureHeader, Sign([]byte(testKey), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(raw), "too many events in flight") {
				t.Errorf("503 without Retry-After or reason: %v %s", resp.Header, raw)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("the 503 took %v: it must not wait for the budget", took)
			}
			break
		}
		// The slow bodies may not have reached the handler yet.
		if time.Now().After(deadline) {
			t.Fatalf("still %d with the budget held: %s", resp.StatusCode, raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range slow {
		_ = c.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		if code, _ := e.post(body); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("events still refused after the slow clients left")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if e.srv.budget.used.Load() != 0 {
		t.Errorf("budget still holds %d bytes", e.srv.budget.used.Load())
	}
}

// TestBodyOverLimitRefusedUnread checks that a Content-Length over the limit
// is answered 413 before any of the body is read.
func TestBodyOverLimitRefusedUnread(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	c := slowPost(t, addrOf(e), MaxEventBytes+1)
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer while the body is unsent: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("answer = %d (close %v), want 413 closing the connection", resp.StatusCode, resp.Close)
	}
}

// TestLimitListener checks that at most n connections are open at once.
func TestLimitListener(t *testing.T) {
	t.Parallel()
	e := newTestEnvOn(t, nil, func(ln net.Listener) net.Listener { return LimitListener(ln, 2) })
	lim := e.ts.Listener.(*ConnLimiter)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addrOf(e))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	for deadline := time.Now().Add(5 * time.Second); lim.Open() != 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want 2", lim.Open())
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.ts.URL+"/healthz", nil)
	if resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a third connection was served: %d", resp.StatusCode)
	}
	_ = held[0].Close()
	resp, err := (&http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}).Get(e.ts.URL + "/healthz")
	if err != nil {
		t.Fatalf("after one closed: %v", err)
	}
	resp.Body.Close()
}

// TestStreamOutlivesWriteTimeout checks that an event stream keeps going
// past the server's write timeout: each write moves the deadline.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) {
		c.WriteTimeout = 200 * time.Millisecond
		c.ReadTimeout = 200 * time.Millisecond
		c.StreamHeartbeat = 50 * time.Millisecond
	})
	sc, done := openStream(t, e, "")
	defer done()
	time.Sleep(600 * time.Millisecond)
	e.mustPost(fixture(t, "kustomization-progressing"), 200)
	got := readSSE(t, sc, 1)
	if !strings.Contains(got[0].data, `"to":"pending"`) {
		t.Errorf("event = %+v", got[0])
	}
}

// TestShutdownEndsStuckStream checks that a stream client that never reads
// does not hold up the shutdown: streams end when it begins.
func TestShutdownEndsStuckStream(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	// A tiny send buffer makes the server's writes block soon.
	hs := e.srv.HTTPServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(smallBuffers{ln}) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /api/v1/stream?last_event_id=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", testToken)
	// Phase changes with long messages fill the socket buffers: the stream
	// blocks in a write.
	res := e.mustPost(fixture(t, "kustomization-progressing"), 200)
	long := strings.Repeat("m", 64<<10)
	for i := range 40 {
		if _, err := e.st.UpdateDeployment(t.Context(), store.DeploymentUpdate{ID: res.DeploymentID,
			Phase: []store.Phase{store.PhaseDeploying, store.PhaseDegraded}[i%2], Message: long, UpdatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	e.srv.hub.notify()
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	start := time.Now()
	if err := hs.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown after %v: %v", time.Since(start), err)
	}
}

type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestRawStoreErrorsNotShown checks that a failing store is reported to
// clients without the database's own error.
func TestRawStoreErrorsNotShown(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	_ = e.st.Close()
	code, r := e.post(fixture(t, "kustomization-progressing"))
	if code != http.StatusServiceUnavailable || r.Error != "storing event failed" {
		t.Errorf("POST = %d %q", code, r.Error)
	}
	var body errorBody
	if code := e.api("/api/v1/apps", &body); code != 500 || body.Error != "reading the history store failed" {
		t.Errorf("GET apps = %d %q", code, body.Error)
	}
	resp, err := http.Get(e.ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || strings.Contains(string(raw), "sql") {
		t.Errorf("readyz = %d %s", resp.StatusCode, raw)
	}
}

// TestTrackerForgetsSupersededDeployments checks that the tracker's memory
// follows the apps, not their history: a superseded deployment leaves no
// state behind.
func TestTrackerForgetsSupersededDeployments(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) {
		c.Prober = fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StateSkipped}
	})
	for i := range 30 {
		rev := fmt.Sprintf("main@sha1:%040d", i)
		e.mustPost(fixture(t, "kustomization-succeeded", withRevision(rev)), 200)
		e.waitApp("shop", "api", func(a store.App) bool { return a.Revision == rev && a.Phase == store.PhaseRunning })
	}
	tr := e.srv.tracker
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if n := len(tr.written) + len(tr.healths) + len(tr.appOf) + len(tr.degradedSince); n > 3 {
		t.Errorf("the tracker holds %d entries (written %d, healths %d, appOf %d) after 30 deployments of one app, want at most 3",
			n, len(tr.written), len(tr.healths), len(tr.appOf))
	}
}
