package webhook

import (
	"bufio"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/store"
)

// pagesClient is a browser-like client of a status page server: it keeps
// cookies (the Secure ones too, over the test's plain HTTP), follows no
// redirect and sends the Sec-Fetch-Site a browser sends.
type pagesClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newPagesClient(t *testing.T, srv *Server) *pagesClient {
	t.Helper()
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pagesClient{t: t, base: ts.URL, hc: &http.Client{Jar: secureJar{jar}, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// secureJar stores Secure cookies got over http://127.0.0.1 as a browser
// does for a local address.
type secureJar struct{ *cookiejar.Jar }

func (j secureJar) SetCookies(u *url.URL, cs []*http.Cookie) {
	v := *u
	v.Scheme = "https"
	j.Jar.SetCookies(&v, cs)
}

func (j secureJar) Cookies(u *url.URL) []*http.Cookie {
	v := *u
	v.Scheme = "https"
	return j.Jar.Cookies(&v)
}

func (c *pagesClient) do(method, path string, form url.Values, site string) (*http.Response, string) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if site != "" {
		req.Header.Set("Sec-Fetch-Site", site)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// formCSRF returns the CSRF token of the page's form.
func formCSRF(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%s", page)
	}
	return m[1]
}

func TestPagesSignIn(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, nil)
	pageFixtures(t, st)
	c := newPagesClient(t, srv)

	// Not signed in: the pages send the browser to the form, the stream refuses.
	resp, _ := c.do("GET", "/apps/shop/web?x=1", nil, "")
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/login?next=%2Fapps%2Fshop%2Fweb%3Fx%3D1" {
		t.Fatalf("GET an app page signed out = %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := c.do("GET", "/ui/stream", nil, ""); resp.StatusCode != 401 {
		t.Errorf("GET /ui/stream signed out = %d, want 401", resp.StatusCode)
	}

	resp, page := c.do("GET", "/login?next=/apps/shop/web", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /login = %d", resp.StatusCode)
	}
	for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("GET /login has no %s header", h)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP = %q", csp)
	}
	csrf := formCSRF(t, page)
	login := func(tok, csrf, site string) *http.Response {
		resp, _ := c.do("POST", "/login", url.Values{"token": {tok}, "csrf": {csrf}, "next": {"/apps/shop/web"}}, site)
		return resp
	}
	if r := login(testToken, csrf, "cross-site"); r.StatusCode != 403 {
		t.Errorf("a cross-site sign-in = %d, want 403", r.StatusCode)
	}
	if r := login(testToken, "forged", "same-origin"); r.StatusCode != 403 {
		t.Errorf("a sign-in with a forged CSRF token = %d, want 403", r.StatusCode)
	}
	_, page = c.do("GET", "/login", nil, "")
	csrf = formCSRF(t, page)
	if r := login("wrong", csrf, "same-origin"); r.StatusCode != 401 {
		t.Errorf("a sign-in with a wrong token = %d, want 401", r.StatusCode)
	}
	_, page = c.do("GET", "/login", nil, "")
	r := login(testViewerToken, formCSRF(t, page), "same-origin")
	if r.StatusCode != 303 || r.Header.Get("Location") != "/apps/shop/web" {
		t.Fatalf("sign-in = %d Location %q", r.StatusCode, r.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, ck := range r.Cookies() {
		if ck.Name == sessionCookie {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || !session.Secure || session.SameSite != http.SameSiteStrictMode || session.Path != "/" || session.MaxAge <= 0 {
		t.Fatalf("session cookie = %+v, want HttpOnly, Secure, SameSite=Strict on /", session)
	}
	if strings.Contains(session.Value, testViewerToken) || strings.Contains(session.Value, testToken) {
		t.Error("the session cookie holds a token")
	}

	resp, page = c.do("GET", "/apps/shop/web", nil, "")
	if resp.StatusCode != 200 || !strings.Contains(page, `<span class="role">viewer</span>`) {
		t.Fatalf("GET the app page signed in = %d", resp.StatusCode)
	}
	if strings.Contains(page, testViewerToken) || strings.Contains(page, testToken) {
		t.Error("a page shows a token")
	}
	// A session is not a bearer token: the API wants the API token.
	if resp, _ := c.do("GET", "/api/v1/apps", nil, ""); resp.StatusCode != 401 {
		t.Errorf("GET /api/v1/apps with a session = %d, want 401", resp.StatusCode)
	}

	// A tampered or foreign session is no session.
	for name, v := range map[string]string{
		"secret changed": flipOne(session.Value),
		"last bits set":  session.Value[:len(session.Value)-1] + string(session.Value[len(session.Value)-1]+1),
		"v1 form":        "djF8dmlld2VyfDE3NzI0MDAwMDB8MDA.AA",
		"no prefix":      strings.TrimPrefix(session.Value, sessionPrefix),
		"garbage":        "x.y",
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != 303 {
			t.Errorf("session %s: GET / = %d, want 303 to the sign-in", name, rec.Code)
		}
	}
	// Another server, with its own session list, does not take it.
	other, _ := pageServer(t, nil)
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(session)
	rec := httptest.NewRecorder()
	other.Handler().ServeHTTP(rec, req)
	if rec.Code != 303 {
		t.Errorf("a session of another server: GET / = %d, want 303", rec.Code)
	}

	// Signing out needs the session's CSRF token.
	if resp, _ := c.do("POST", "/logout", url.Values{"csrf": {"forged"}}, "same-origin"); resp.StatusCode != 403 {
		t.Errorf("sign-out with a forged token = %d, want 403", resp.StatusCode)
	}
	if resp, _ := c.do("POST", "/logout", url.Values{"csrf": {formCSRF(t, page)}}, "cross-site"); resp.StatusCode != 403 {
		t.Errorf("a cross-site sign-out = %d, want 403", resp.StatusCode)
	}
	resp, _ = c.do("POST", "/logout", url.Values{"csrf": {formCSRF(t, page)}}, "same-origin")
	if resp.StatusCode != 303 {
		t.Fatalf("sign-out = %d", resp.StatusCode)
	}
	if resp, _ := c.do("GET", "/", nil, ""); resp.StatusCode != 303 {
		t.Errorf("GET / after signing out = %d, want 303", resp.StatusCode)
	}
}

// flipOne changes a character of a cookie's secret (not its last: that
// one carries bits the decoder ignores).
func flipOne(v string) string {
	i := len(v) - 10
	repl := byte('A')
	if v[i] == 'A' {
		repl = 'B'
	}
	return v[:i] + string(repl) + v[i+1:]
}

func TestSessionExpires(t *testing.T) {
	t.Parallel()
	_, st := pageServer(t, nil)
	now := pageT0
	s := newSessions(st, "admin-token-0123456789", []ViewerToken{{Token: "viewer-token-0123456789", Projects: []string{"shop"}}}, time.Hour, func() time.Time { return now })
	tok, ok := s.token("admin-token-0123456789")
	if !ok {
		t.Fatal("the API token is not a token")
	}
	v, _, err := s.create(t.Context(), store.Session{Kind: store.SessionToken, TokenHash: hex.EncodeToString(tok.sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	if _, vis, err := s.check(t.Context(), v); err != nil || vis.grant.roleOn("any") != roleAdmin {
		t.Fatalf("check(fresh session) = %+v, %v", vis, err)
	}
	now = now.Add(time.Hour)
	if _, _, err := s.check(t.Context(), v); !errors.Is(err, errNoSession) {
		t.Errorf("a session an hour old: err %v, want it expired", err)
	}
	if got, ok := s.token("viewer-token-0123456789"); !ok || got.grant.allows("other") || !got.grant.allows("shop") {
		t.Errorf("token(viewer) = %+v, %v", got, ok)
	}
	if _, ok := s.token("viewer-token-012345678"); ok {
		t.Error("a prefix of a token is a token")
	}
}

func TestPagesBearerAndDisabled(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, nil)
	pageFixtures(t, st)
	h := srv.Handler()
	for _, tc := range []struct {
		path, tok string
		code      int
	}{
		{"/", testToken, 200},
		{"/", testViewerToken, 200},
		{"/", "wrong", 401},
		{"/apps/shop/nope", testToken, 404},
		{"/apps/shop/web", testViewerToken, 200},
		{"/api/v1/apps", testViewerToken, 200},
		{"/api/v1/apps", "wrong", 401},
		{"/api/v1/apps", testToken, 200},
	} {
		if rec := get(t, h, tc.path, tc.tok); rec.Code != tc.code {
			t.Errorf("GET %s with %q = %d, want %d", tc.path, tc.tok, rec.Code, tc.code)
		}
	}
	off, _ := pageServer(t, func(c *Config) { c.APIToken, c.Pages.ViewerToken = "", "" })
	for _, p := range []string{"/", "/login"} {
		if rec := get(t, off.Handler(), p, ""); rec.Code != 503 {
			t.Errorf("GET %s with no token configured = %d, want 503", p, rec.Code)
		}
	}
}

func TestPlainHTTPWarning(t *testing.T) {
	t.Parallel()
	srv, _ := pageServer(t, nil)
	for _, tc := range []struct {
		host, proto string
		warn        bool
	}{
		{"127.0.0.1:8080", "", false},
		{"localhost:8080", "", false},
		{"[::1]:8080", "", false},
		{"status.example.com", "", true},
		{"10.0.0.7:8080", "", true},
		{"status.example.com", "https", false},
	} {
		req := httptest.NewRequest("GET", "/login", nil)
		req.Host = tc.host
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if got := strings.Contains(rec.Body.String(), "came over plain HTTP"); rec.Code != 200 || got != tc.warn {
			t.Errorf("GET /login on %s (proto %q) = %d, warns %v; want 200, %v", tc.host, tc.proto, rec.Code, got, tc.warn)
		}
	}
}

func TestLocalPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                      "/",
		"/apps/shop/api?x=1":    "/apps/shop/api?x=1",
		"//evil.example":        "/",
		"https://evil.example/": "/",
		"/\\evil.example":       "/",
		"apps":                  "/",
		"/a\r\nSet-Cookie: x":   "/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStaticAssets(t *testing.T) {
	t.Parallel()
	srv, _ := pageServer(t, nil)
	h := srv.Handler()
	for _, name := range []string{"app.js", "style.css"} {
		u := srv.pages.assetURL[name]
		rec := get(t, h, u, "")
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" ||
			rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s = %d %v", u, rec.Code, rec.Header())
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, map[string]string{"app.js": "text/javascript", "style.css": "text/css"}[name]) {
			t.Errorf("GET %s Content-Type = %q", u, ct)
		}
	}
	if rec := get(t, h, "/ui/static/app.js", ""); rec.Code != 404 {
		t.Errorf("GET the unhashed name = %d, want 404", rec.Code)
	}
}

func TestPageMetrics(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, nil)
	pageFixtures(t, st)
	h := srv.Handler()
	get(t, h, "/", testToken)
	get(t, h, "/apps/shop/web", testToken)
	get(t, h, "/apps/shop/nope", testToken)
	get(t, h, "/login", "")
	// A page's live-update stream, opened and closed.
	ts := httptest.NewServer(h)
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+"/ui/stream", nil)
	req.Header.Set("Authorization", "Bearer "+testViewerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(resp.Body).ReadString('\n'); resp.StatusCode != 200 || line != "retry: 2000\n" {
		t.Errorf("GET /ui/stream = %d %q", resp.StatusCode, line)
	}
	resp.Body.Close()
	rec := get(t, h, "/metrics", "")
	var got []string
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "fleetwright_webhook_page_views_total{") || strings.HasPrefix(sc.Text(), "fleetwright_webhook_streams_opened_total{") {
			got = append(got, sc.Text())
		}
	}
	want := []string{
		`fleetwright_webhook_page_views_total{code="200",page="app"} 1`,
		`fleetwright_webhook_page_views_total{code="200",page="login"} 1`,
		`fleetwright_webhook_page_views_total{code="200",page="overview"} 1`,
		`fleetwright_webhook_page_views_total{code="404",page="app"} 1`,
		`fleetwright_webhook_streams_opened_total{client="page"} 1`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("page metrics (-want +got):\n%s", diff)
	}
}

// FuzzSessionCheck feeds cookie values to the session check: it must not
// panic, and it takes only a value it issued, whole.
func FuzzSessionCheck(f *testing.F) {
	st, err := store.OpenSQLite(f.Context(), filepath.Join(f.TempDir(), "h.db"), store.SQLiteOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	s := newSessions(st, "", []ViewerToken{{Token: "viewer-token-0123456789", Projects: []string{"shop"}}}, time.Hour, func() time.Time { return pageT0 })
	tok, _ := s.token("viewer-token-0123456789")
	good, _, err := s.create(f.Context(), store.Session{Kind: store.SessionToken, TokenHash: hex.EncodeToString(tok.sum[:])})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{good, "", ".", "x.y", good + "x", sessionPrefix, strings.Replace(good, ".", "..", 1), "djF8YWRtaW58MXwx.AA"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		_, vis, err := s.check(t.Context(), v)
		if err == nil && v != good {
			t.Fatalf("check(%q) = %+v, a value never issued", v, vis)
		}
		if err == nil && (!vis.grant.allows("shop") || vis.grant.allows("other")) {
			t.Fatalf("check(issued viewer session) = %+v", vis)
		}
	})
}

// FuzzOverviewFilter feeds query strings to the overview's filter: its
// links must parse back to the same filter.
func FuzzOverviewFilter(f *testing.F) {
	for _, seed := range []string{"", "phase=failed&project=shop&q=api&page=3", "q=%00&page=-1", "page=99999999999999999999", "project=a%26b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		fl := parseOverviewFilter(q)
		u, err := url.Parse(fl.url(nil))
		if err != nil {
			t.Fatalf("the filter's link %q does not parse: %v", fl.url(nil), err)
		}
		if back := parseOverviewFilter(u.Query()); back != fl {
			t.Fatalf("filter %+v links to %q, which reads back as %+v", fl, fl.url(nil), back)
		}
	})
}
