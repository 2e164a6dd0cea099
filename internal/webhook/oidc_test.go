package webhook

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

var (
	alice = testPerson{ID: "alice-sub", Username: "alice", Password: "alice-password", Email: "alice@example.test", Groups: []string{"team-shop"}}
	bob   = testPerson{ID: "bob-sub", Username: "bob", Password: "bob-password", Email: "bob@example.test"}
	eve   = testPerson{ID: "eve-sub", Username: "eve", Password: "eve-password", Email: "eve@example.test", Groups: []string{"contractors"}}
)

const testAccessFile = `rules:
  - group: team-shop
    projects: [shop]
  - email: bob@example.test
    projects: [billing]
    role: operator
`

// oidcEnv is a started webhook signing people in through a test provider,
// with pageFixtures' apps (shop and billing).
func oidcEnv(t *testing.T) (*testEnv, *testIdP) {
	t.Helper()
	access, err := ParseAccess("access.yaml", []byte(testAccessFile))
	if err != nil {
		t.Fatal(err)
	}
	var idp *testIdP
	e := newTestEnvAt(t, func(c *Config, base string) {
		idp = startIdP(t, base+"/auth/callback", alice, bob, eve)
		c.Pages.OIDC = idp.oidcConfig(base+"/auth/callback", access)
		c.Pages.ViewerTokens = []ViewerToken{{Token: shopViewerToken, Projects: []string{"shop"}}}
		c.StreamPoll = 20 * time.Millisecond
	}, nil)
	pageFixtures(t, e.st)
	return e, idp
}

// browserClient keeps cookies as a browser does (the webhook's Secure ones
// over the test's plain HTTP too), trusts the provider's certificate and
// follows redirects.
func browserClient(t *testing.T, idp *testIdP) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: secureJar{jar}, Transport: idp.Client.Transport, Timeout: 10 * time.Second}
}

var idpFormID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// oidcSignIn signs p in from /auth/login through the provider's login form;
// tamper, when set, may change the flow cookie on the way. It returns the
// callback's answer.
func oidcSignIn(t *testing.T, c *http.Client, base string, p testPerson, tamper func(*oidcFlow)) (int, string) {
	t.Helper()
	stop := c.CheckRedirect
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(base + "/auth/login?next=" + url.QueryEscape("/apps/shop/web"))
	c.CheckRedirect = stop
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	authz, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 303 || err != nil {
		t.Fatalf("GET /auth/login = %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	q := authz.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "" {
		t.Fatalf("the authorization request lacks PKCE, state or nonce: %s", authz)
	}
	if tamper != nil {
		u, _ := url.Parse(base)
		for _, ck := range c.Jar.Cookies(u) {
			if ck.Name != oidcFlowCookie {
				continue
			}
			raw, _ := base64.RawURLEncoding.DecodeString(ck.Value)
			var f oidcFlow
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			tamper(&f)
			b, _ := json.Marshal(f)
			c.Jar.SetCookies(u, []*http.Cookie{{Name: oidcFlowCookie, Value: base64.RawURLEncoding.EncodeToString(b), Path: "/"}})
		}
	}
	resp, err = c.Get(authz.String())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := idpFormID.FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("the provider's login page = %d:\n%s", resp.StatusCode, page)
	}
	resp, err = c.PostForm(strings.TrimSuffix(idpOrigin(resp.Request.URL), "/")+"/login/username",
		url.Values{"id": {string(m[1])}, "username": {p.Username}, "password": {p.Password}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if loc := resp.Header.Get("Location"); resp.StatusCode == 302 && strings.HasPrefix(loc, base+"/auth/callback") {
		// The client stopped before the callback.
		return resp.StatusCode, loc
	}
	if !strings.HasPrefix(resp.Request.URL.String(), base+"/auth/callback") {
		t.Fatalf("signing in at the provider ended at %s (%d):\n%s", resp.Request.URL, resp.StatusCode, body)
	}
	return resp.StatusCode, string(body)
}

func idpOrigin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// getWith GETs path with c and returns the code and body.
func getWith(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	defer func() { c.CheckRedirect = nil }()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOIDCSignIn signs people in through a real OpenID provider: alice,
// granted shop through her group, sees shop and nothing of billing (page,
// stream, API); bob, granted billing by his email, is its operator; eve,
// granted nothing, gets no session.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	e, idp := oidcEnv(t)
	base := e.ts.URL

	c := browserClient(t, idp)
	code, body := oidcSignIn(t, c, base, alice, nil)
	if code != 200 || !strings.Contains(body, `content="0;url=/apps/shop/web"`) || !strings.Contains(body, "alice@example.test") {
		t.Fatalf("the callback = %d:\n%s", code, body)
	}
	if code, page := getWith(t, c, base+"/apps/shop/web"); code != 200 || !strings.Contains(page, `<span class="role">viewer</span>`) {
		t.Fatalf("alice: GET /apps/shop/web = %d", code)
	} else if strings.Contains(page, "render rollback") {
		t.Error("alice, a viewer, is shown rollback commands")
	}
	for _, name := range []string{"invoices", "reports", "nope"} {
		if code, page := getWith(t, c, base+"/apps/billing/"+name); code != 404 || !isNoAppPage(page, "billing", name) {
			t.Errorf("alice: GET /apps/billing/%s = %d %q, want 404 as for no app", name, code, page)
		}
	}
	if code, page := getWith(t, c, base+"/"); code != 200 || strings.Contains(page, "billing") {
		t.Errorf("alice: the overview = %d and shows billing", code)
	}
	// A session is no API token: the API wants a bearer token.
	if code, _ := getWith(t, c, base+"/api/v1/apps/billing/invoices/logs?component=web"); code != 401 {
		t.Errorf("alice: GET billing's logs from the API = %d, want 401", code)
	}
	// The stream: billing changes, alice hears nothing of it.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/ui/stream?last_event_id=0", nil)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("alice: GET /ui/stream = %v %v", resp, err)
	}
	recordDeployment(t, e.st, "billing", "invoices", 30, store.PhaseRunning, "", probe.Result{}, "")
	projects := map[string]bool{}
	sc := readLines(resp.Body, time.Second)
	for _, l := range sc {
		if data, ok := strings.CutPrefix(l, "data: "); ok {
			var pc store.PhaseChange
			_ = json.Unmarshal([]byte(data), &pc)
			projects[pc.App.Project] = true
		}
	}
	if projects["billing"] || !projects["shop"] {
		t.Errorf("alice's stream sent the changes of %v, want shop's only", projects)
	}

	// bob: billing by his email, as an operator.
	cb := browserClient(t, idp)
	if code, body := oidcSignIn(t, cb, base, bob, nil); code != 200 {
		t.Fatalf("bob: the callback = %d:\n%s", code, body)
	}
	// (invoices has a past deployment since the stream test above: the
	// operator gets its rollback command.)
	if code, page := getWith(t, cb, base+"/apps/billing/invoices"); code != 200 || !strings.Contains(page, `<span class="role">operator</span>`) ||
		!strings.Contains(page, "render rollback billing/invoices --to ") {
		t.Errorf("bob: GET /apps/billing/invoices = %d, or not as its operator", code)
	}
	if code, _ := getWith(t, cb, base+"/apps/shop/web"); code != 404 {
		t.Errorf("bob: GET /apps/shop/web = %d, want 404", code)
	}

	// eve: signed in at the provider, granted nothing here.
	ce := browserClient(t, idp)
	if code, body := oidcSignIn(t, ce, base, eve, nil); code != 403 || !strings.Contains(body, "granted no project") {
		t.Errorf("eve: the callback = %d %q, want 403", code, body)
	}
	if code, _ := getWith(t, ce, base+"/"); code != 303 {
		t.Errorf("eve: GET / = %d, want 303 to the sign-in", code)
	}

	// The API token ends bob's sessions; a viewer token may not.
	for _, tc := range []struct {
		tok  string
		code int
	}{{bothViewerToken, 401}, {shopViewerToken, 403}, {testToken, 200}} {
		req, _ := http.NewRequest("DELETE", base+"/api/v1/sessions/"+bob.ID, nil)
		req.Header.Set("Authorization", "Bearer "+tc.tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("DELETE /api/v1/sessions/%s with %s… = %d, want %d", bob.ID, tc.tok[:8], resp.StatusCode, tc.code)
		}
	}
	if code, _ := getWith(t, cb, base+"/apps/billing/invoices"); code != 303 {
		t.Errorf("bob after his sessions were ended: GET = %d, want 303 to the sign-in", code)
	}

	// Signing out ends alice's session for every copy of her cookie.
	u, _ := url.Parse(base)
	var copied string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			copied = ck.Value
		}
	}
	_, page := getWith(t, c, base+"/")
	resp, err = c.PostForm(base+"/logout", url.Values{"csrf": {formCSRF(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	thief := browserClient(t, idp)
	thief.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: copied, Path: "/"}})
	if code, _ := getWith(t, thief, base+"/apps/shop/web"); code != 303 {
		t.Errorf("alice's cookie copied before she signed out: GET = %d, want 303", code)
	}
}

// readLines reads r's lines for d.
func readLines(r io.ReadCloser, d time.Duration) []string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		buf := make([]byte, 4096)
		var acc strings.Builder
		for {
			n, err := r.Read(buf)
			acc.Write(buf[:n])
			for {
				s := acc.String()
				i := strings.IndexByte(s, '\n')
				if i < 0 {
					break
				}
				lines <- s[:i]
				acc.Reset()
				acc.WriteString(s[i+1:])
			}
			if err != nil {
				return
			}
		}
	}()
	var out []string
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return out
			}
			out = append(out, l)
		case <-deadline:
			r.Close()
			for range lines {
			}
			return out
		}
	}
}

// TestOIDCCallbackAttacks: a callback the webhook did not start, a state
// that is not the flow's, a nonce that is not the flow's, a PKCE verifier
// that is not the flow's: none signs anyone in.
func TestOIDCCallbackAttacks(t *testing.T) {
	t.Parallel()
	e, idp := oidcEnv(t)
	base := e.ts.URL
	signedIn := func(c *http.Client) bool {
		code, _ := getWith(t, c, base+"/apps/shop/web")
		return code == 200
	}
	for _, tc := range []struct {
		name   string
		tamper func(*oidcFlow)
		code   int
	}{
		{"another nonce", func(f *oidcFlow) { f.Nonce = randomString() }, 401},
		{"another PKCE verifier", func(f *oidcFlow) { f.Verifier = randomString() }, 401},
		{"another state", func(f *oidcFlow) { f.State = randomString() }, 400},
	} {
		c := browserClient(t, idp)
		if code, body := oidcSignIn(t, c, base, alice, tc.tamper); code != tc.code {
			t.Errorf("%s: the callback = %d %q, want %d", tc.name, code, body, tc.code)
		}
		if signedIn(c) {
			t.Errorf("%s: signed in", tc.name)
		}
	}
	// A callback with a code of the attacker's, in a browser that never
	// started a sign-in here (login CSRF).
	attacker := browserClient(t, idp)
	attacker.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), base+"/auth/callback") {
			return http.ErrUseLastResponse
		}
		return nil
	}
	code, callback := oidcSignIn(t, attacker, base, alice, nil)
	if code != 302 {
		t.Fatalf("the attacker's sign-in did not stop before the callback: %d", code)
	}
	victim := browserClient(t, idp)
	code, _ = getWith(t, victim, callback)
	if code != 400 || signedIn(victim) {
		t.Errorf("a callback of another browser's sign-in = %d, signed in %v; want 400, not signed in", code, signedIn(victim))
	}
}
