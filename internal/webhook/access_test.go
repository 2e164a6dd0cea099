package webhook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

func hexSum(t tokenEntry) string { return hex.EncodeToString(t.sum[:]) }

// The tokens of the access tests: a viewer of shop (the attacker's team),
// and the victim's project, billing.
const (
	shopViewerToken = "shop-viewer-token-0123456789"
	bothViewerToken = "shop-and-billing-viewer-token"
)

// accessServer is a page server whose viewers are a viewer of shop and a
// viewer of shop and billing, with pageFixtures (apps of shop and billing).
func accessServer(t *testing.T) (*Server, *store.SQL) {
	t.Helper()
	srv, st := pageServer(t, func(c *Config) {
		c.Pages.ViewerToken = ""
		c.Pages.ViewerTokens = []ViewerToken{
			{Token: shopViewerToken, Projects: []string{"shop"}},
			{Token: bothViewerToken, Projects: []string{"shop", "billing"}},
		}
		c.StreamPoll = 20 * time.Millisecond
	})
	pageFixtures(t, st)
	return srv, st
}

// isNoAppPage reports whether page is the site's 404 page for the app
// project/name, naming nothing of the project beyond what was asked.
func isNoAppPage(page, project, name string) bool {
	return strings.Contains(page, `<section class="head notfound" id="notfound">`) &&
		strings.Contains(page, `<p class="message">No app `+project+"/"+name+`.</p>`) &&
		strings.Count(page, project) == 1 // the message
}

// TestViewerOfOneProjectGetsNothingOfAnother is a viewer of shop trying
// every way to billing's apps: their pages, the API's reads, the names of
// apps guessed, the overview.
func TestViewerOfOneProjectGetsNothingOfAnother(t *testing.T) {
	t.Parallel()
	srv, _ := accessServer(t)
	h := srv.Handler()

	// billing's apps answer exactly as apps that do not exist: the names
	// a viewer guesses tell nothing.
	var first string
	for _, name := range []string{"invoices", "reports", "nope", "admin"} {
		rec := get(t, h, "/apps/billing/"+name, shopViewerToken)
		page := rec.Body.String()
		if rec.Code != 404 || !isNoAppPage(page, "billing", name) {
			t.Errorf("GET /apps/billing/%s as a viewer of shop = %d %q, want 404 as for no app", name, rec.Code, rec.Body)
		}
		// The same page, but for the name asked for.
		if same := strings.ReplaceAll(page, "billing/"+name+".", "billing/NAME."); first == "" {
			first = same
		} else if same != first {
			t.Errorf("GET /apps/billing/%s differs from the page of another name:\n%s", name, cmp.Diff(first, same))
		}
		for _, p := range []string{"", "/deployments", "/deploy-status", "/events", "/pods", "/logs?component=web"} {
			path := "/api/v1/apps/billing/" + name + p
			rec := get(t, h, path, shopViewerToken)
			var body errorBody
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != 404 || body.Error != "no app billing/"+name {
				t.Errorf("GET %s with a viewer token of shop = %d %s, want 404 as for no app", path, rec.Code, rec.Body)
			}
		}
	}
	// Its own project's apps it sees (without the rollback commands, an
	// operator's); a viewer of both sees billing's.
	if rec := get(t, h, "/apps/shop/web", shopViewerToken); rec.Code != 200 || strings.Contains(rec.Body.String(), "render rollback") {
		t.Errorf("GET /apps/shop/web as a viewer of shop = %d, or shows a rollback command", rec.Code)
	}
	if rec := get(t, h, "/apps/shop/web", testToken); rec.Code != 200 || !strings.Contains(rec.Body.String(), "render rollback prod/shop/web --to ") {
		t.Errorf("GET /apps/shop/web with the API token = %d, without the rollback command", rec.Code)
	}
	if rec := get(t, h, "/api/v1/apps/shop/web/deploy-status", shopViewerToken); rec.Code != 200 {
		t.Errorf("GET shop/web's deploy-status as a viewer of shop = %d", rec.Code)
	}
	if rec := get(t, h, "/apps/billing/invoices", bothViewerToken); rec.Code != 200 {
		t.Errorf("GET /apps/billing/invoices as a viewer of billing = %d", rec.Code)
	}

	// The list of apps and the overview hold shop's apps only, and count
	// only them.
	var apps struct{ Apps []store.App }
	rec := get(t, h, "/api/v1/apps", shopViewerToken)
	if err := json.Unmarshal(rec.Body.Bytes(), &apps); err != nil || rec.Code != 200 {
		t.Fatalf("GET /api/v1/apps = %d %s", rec.Code, rec.Body)
	}
	for _, a := range apps.Apps {
		if a.Project != "shop" {
			t.Errorf("GET /api/v1/apps as a viewer of shop lists %s/%s", a.Project, a.Name)
		}
	}
	if len(apps.Apps) == 0 {
		t.Error("GET /api/v1/apps as a viewer of shop lists nothing")
	}
	// (A filter shows what was typed into it: "billing" in the project
	// filter, "invoices" in the search box, and nothing else of billing.)
	for _, path := range []string{"/", "/?project=billing", "/?q=invoices", "/?phase=failed"} {
		rec := get(t, h, path, shopViewerToken)
		body := rec.Body.String()
		if rec.Code != 200 || strings.Contains(body, "/apps/billing/") || strings.Contains(body, "reports") ||
			(path == "/" || path == "/?phase=failed") && (strings.Contains(body, "billing") || strings.Contains(body, "invoices")) {
			t.Errorf("GET %s as a viewer of shop = %d, and shows billing's apps", path, rec.Code)
		}
	}
	v, err := srv.overview(httptest.NewRequest("GET", "/", nil).WithContext(contextWithVisitor(httptest.NewRequest("GET", "/", nil),
		visitor{grant: grantOf(roleViewer, "shop")})), overviewFilter{Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v.Apps != len(apps.Apps) || v.Total != len(apps.Apps) || strings.Join(v.Projects, ",") != "shop" {
		t.Errorf("the overview of a viewer of shop counts %d apps (%d shown) of %v, want %d of shop", v.Apps, v.Total, v.Projects, len(apps.Apps))
	}
	failed := 0
	for _, c := range v.Phases {
		if c.Phase == string(store.PhaseFailed) {
			failed = c.Count
		}
	}
	if failed != 0 {
		t.Errorf("the overview of a viewer of shop counts %d failed apps; only billing's app failed", failed)
	}
}

func grantOf(r role, projects ...string) grant {
	var g grant
	g.add(projects, r)
	return g
}

// TestViewerStreamHasNoOtherProject opens the live-update streams as a
// viewer of shop, from the first change on, and asks for billing's by name
// too: not one of billing's changes comes.
func TestViewerStreamHasNoOtherProject(t *testing.T) {
	t.Parallel()
	srv, st := accessServer(t)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, path := range []string{"/ui/stream?last_event_id=0", "/ui/stream?last_event_id=0&project=billing", "/api/v1/stream?last_event_id=0"} {
		projects := streamProjects(t, ts.URL+path, shopViewerToken, func() {
			// A change of billing's while the stream is open.
			recordDeployment(t, st, "billing", "invoices", 20+len(path), store.PhaseRunning, "", probe.Result{}, "")
		})
		for _, p := range projects {
			if p != "shop" {
				t.Errorf("GET %s as a viewer of shop sent a phase change of %s", path, p)
			}
		}
		if !strings.Contains(path, "project=billing") && len(projects) == 0 {
			t.Errorf("GET %s as a viewer of shop sent none of shop's changes", path)
		}
	}
}

// streamProjects reads a stream for a while, calling during once it is
// open, and returns the project of every phase change it sent.
func streamProjects(t *testing.T, u, tok string, during func()) []string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d", u, resp.StatusCode)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	during()
	var projects []string
	deadline := time.After(time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return projects
			}
			if data, ok := strings.CutPrefix(l, "data: "); ok {
				var c store.PhaseChange
				if err := json.Unmarshal([]byte(data), &c); err != nil {
					t.Fatalf("a phase change %q: %v", data, err)
				}
				projects = append(projects, c.App.Project)
			}
		case <-deadline:
			resp.Body.Close()
			for range lines {
			}
			return projects
		}
	}
}

// TestStaleCookieAfterSignOut copies a session cookie, signs out, and
// comes back with the copy: it is refused.
func TestStaleCookieAfterSignOut(t *testing.T) {
	t.Parallel()
	srv, _ := accessServer(t)
	c := newPagesClient(t, srv)
	_, page := c.do("GET", "/login", nil, "")
	resp, _ := c.do("POST", "/login", url.Values{"token": {shopViewerToken}, "csrf": {formCSRF(t, page)}, "next": {"/"}}, "same-origin")
	if resp.StatusCode != 303 {
		t.Fatalf("sign-in = %d", resp.StatusCode)
	}
	var stolen *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie {
			stolen = ck
		}
	}
	if stolen == nil {
		t.Fatal("no session cookie")
	}
	withCookie := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: stolen.Value})
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec
	}
	if rec := withCookie("/apps/shop/web"); rec.Code != 200 {
		t.Fatalf("the copied cookie before sign-out: GET = %d", rec.Code)
	}
	_, page = c.do("GET", "/", nil, "")
	if resp, _ := c.do("POST", "/logout", url.Values{"csrf": {formCSRF(t, page)}}, "same-origin"); resp.StatusCode != 303 {
		t.Fatalf("sign-out = %d", resp.StatusCode)
	}
	for _, path := range []string{"/", "/apps/shop/web"} {
		if rec := withCookie(path); rec.Code != 303 || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
			t.Errorf("the cookie copied before sign-out: GET %s = %d, want 303 to the sign-in", path, rec.Code)
		}
	}
	if rec := withCookie("/ui/stream"); rec.Code != 401 {
		t.Errorf("the cookie copied before sign-out: GET /ui/stream = %d, want 401", rec.Code)
	}
}

// TestRemovedTokenEndsItsSessions: a session lives only as long as its
// token is configured.
func TestRemovedTokenEndsItsSessions(t *testing.T) {
	t.Parallel()
	srv, st := accessServer(t)
	tok, _ := srv.pages.sessions.token(shopViewerToken)
	v, _, err := srv.pages.sessions.create(t.Context(), store.Session{Kind: store.SessionToken, TokenHash: hexSum(tok)})
	if err != nil {
		t.Fatal(err)
	}
	// The same store, another configuration: the shop viewer token is gone.
	other, err := New(Config{Store: st, APIToken: testToken, Clock: fixedClock{pageT0.Add(time.Hour)}, RecheckInterval: -1, PruneInterval: -1,
		Pages: PagesConfig{ViewerTokens: []ViewerToken{{Token: bothViewerToken, Projects: []string{"shop"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	for name, s := range map[string]*Server{"with the token": srv, "without it": other} {
		req := httptest.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if want := map[string]int{"with the token": 200, "without it": 303}[name]; rec.Code != want {
			t.Errorf("a session of the shop viewer token, %s: GET / = %d, want %d", name, rec.Code, want)
		}
	}
}

// TestViewerCannotTakeTheConnections is a viewer opening streams until the
// server refuses, on a listener of 12 connections: the refusal comes while
// connections are left, and /readyz and a signed event still answer.
func TestViewerCannotTakeTheConnections(t *testing.T) {
	t.Parallel()
	e := newTestEnvOn(t, func(c *Config) {
		c.Pages.ViewerTokens = []ViewerToken{{Token: shopViewerToken, Projects: []string{"shop"}}, {Token: bothViewerToken, Projects: []string{"*"}}}
		c.Pages.Streams = StreamLimits{Total: 8, PerToken: 4, PerAddress: 6, PerPerson: 4}
		c.StreamHeartbeat = time.Hour
	}, func(ln net.Listener) net.Listener { return LimitListener(ln, 12) })
	// open opens streams with tok until one is refused, and returns how
	// many it holds and the refusal's limit.
	open := func(tok string) (int, string) {
		held := 0
		for range 20 {
			// A held stream stays open to the end of the test; only its
			// answer's headers must come within 3 s.
			ctx, cancel := context.WithCancel(t.Context())
			req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/ui/stream", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := (&http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 3 * time.Second}}).Do(req)
			if err != nil {
				cancel()
				t.Fatalf("stream %d of %s…: %v (the server took no more connections and refused none)", held+1, tok[:8], err)
			}
			if resp.StatusCode == http.StatusTooManyRequests {
				var body errorBody
				_ = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				cancel()
				return held, body.Error
			}
			if resp.StatusCode != 200 {
				t.Fatalf("stream %d = %d", held+1, resp.StatusCode)
			}
			held++
			t.Cleanup(func() { cancel(); resp.Body.Close() })
		}
		return held, ""
	}
	if n, why := open(shopViewerToken); n != 4 || !strings.Contains(why, "token limit") {
		t.Errorf("a viewer token held %d streams, then %q; want 4, then the token limit", n, why)
	}
	if n, why := open(bothViewerToken); n != 2 || !strings.Contains(why, "address limit") {
		t.Errorf("a second viewer token from the same address held %d more, then %q; want 2, then the address limit", n, why)
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}
	resp, err := client.Get(e.ts.URL + "/readyz")
	if err != nil {
		t.Fatalf("/readyz while the viewers hold their streams: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/readyz = %d", resp.StatusCode)
	}
	body := fixture(t, "kustomization-progressing")
	req, _ := http.NewRequest("POST", e.ts.URL+"/hooks/flux", bytes.NewReader(body))
	req.Header.Set(SignatureHeader, Sign([]byte(testKey), body))
	resp, err = client.Do(req)
	if err != nil {
		t.Fatalf("a signed event while the viewers hold their streams: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a signed event = %d", resp.StatusCode)
	}
	if got := testutil.ToFloat64(e.srv.pages.refused.WithLabelValues("token")); got != 1 {
		t.Errorf("streams refused by the token limit = %v, want 1", got)
	}
}
