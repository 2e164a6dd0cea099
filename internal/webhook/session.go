package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// role is what a status page visitor may see and do. Both roles see every
// page; neither can change anything (the pages have no mutating action and
// a viewer token opens no /api/v1 call).
type role int

const (
	roleNone role = iota
	roleViewer
	roleAdmin
)

func (r role) String() string {
	switch r {
	case roleAdmin:
		return "admin"
	case roleViewer:
		return "viewer"
	}
	return "none"
}

const (
	sessionCookie = "__Host-fleetwright-session"
	csrfCookie    = "__Host-fleetwright-csrf"
	// sessionPurpose separates the session keys from any other use of the tokens.
	sessionPurpose = "fleetwright status page session v1"
)

// sessions signs and checks the status pages' session cookies. A session
// is "v1|role|expiry|nonce" with an HMAC-SHA256 over it, keyed by a key
// derived from the token of its role: the cookie holds no token, any
// replica with the same tokens accepts it, and changing a token ends the
// sessions it opened.
type sessions struct {
	keys map[role][]byte
	sums map[role][32]byte
	ttl  time.Duration
	now  func() time.Time
}

func newSessions(adminToken, viewerToken string, ttl time.Duration, now func() time.Time) *sessions {
	s := &sessions{keys: map[role][]byte{}, sums: map[role][32]byte{}, ttl: ttl, now: now}
	for r, tok := range map[role]string{roleAdmin: adminToken, roleViewer: viewerToken} {
		if tok == "" {
			continue
		}
		m := hmac.New(sha256.New, []byte(tok))
		m.Write([]byte(sessionPurpose))
		s.keys[r] = m.Sum(nil)
		s.sums[r] = sha256.Sum256([]byte(tok))
	}
	return s
}

// enabled reports whether any token can sign in.
func (s *sessions) enabled() bool { return len(s.keys) > 0 }

// tokenRole returns the role a token signs in as, comparing in constant
// time against every configured token.
func (s *sessions) tokenRole(tok string) role {
	if tok == "" {
		return roleNone
	}
	sum := sha256.Sum256([]byte(tok))
	got := roleNone
	for _, r := range []role{roleAdmin, roleViewer} {
		want, ok := s.sums[r]
		if ok && subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
			got = r
		}
	}
	return got
}

func (s *sessions) mac(r role, payload string) []byte {
	m := hmac.New(sha256.New, s.keys[r])
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// session is a checked session cookie.
type session struct {
	role  role
	nonce string
}

// issue returns a new session cookie value for r.
func (s *sessions) issue(r role) (string, time.Time) {
	var n [16]byte
	_, _ = rand.Read(n[:])
	exp := s.now().Add(s.ttl)
	payload := "v1|" + r.String() + "|" + strconv.FormatInt(exp.Unix(), 10) + "|" + hex.EncodeToString(n[:])
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(s.mac(r, payload)), exp
}

// check verifies a session cookie value.
func (s *sessions) check(v string) (session, bool) {
	p64, m64, ok := strings.Cut(v, ".")
	if !ok {
		return session{}, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	mac, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil {
		return session{}, false
	}
	parts := strings.Split(string(payload), "|")
	if len(parts) != 4 || parts[0] != "v1" {
		return session{}, false
	}
	var r role
	switch parts[1] {
	case "admin":
		r = roleAdmin
	case "viewer":
		r = roleViewer
	default:
		return session{}, false
	}
	if _, ok := s.keys[r]; !ok || !hmac.Equal(mac, s.mac(r, string(payload))) {
		return session{}, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || !s.now().Before(time.Unix(exp, 0)) {
		return session{}, false
	}
	return session{role: r, nonce: parts[3]}, true
}

// csrfToken is the token a session's forms carry.
func (s *sessions) csrfToken(se session) string {
	return base64.RawURLEncoding.EncodeToString(s.mac(se.role, "csrf|"+se.nonce))
}

// checkCSRF compares a form's token with the session's in constant time.
func (s *sessions) checkCSRF(se session, tok string) bool {
	want := s.csrfToken(se)
	return subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1
}

// visitor is who asks for a page: a bearer token's holder or a session's.
type visitor struct {
	role    role
	session *session
}

// visitorOf authenticates a page request: a bearer token, else the session
// cookie.
func (s *sessions) visitorOf(r *http.Request) visitor {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, _ := bearerToken(h)
		return visitor{role: s.tokenRole(tok)}
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return visitor{}
	}
	se, ok := s.check(c.Value)
	if !ok {
		return visitor{}
	}
	return visitor{role: se.role, session: &se}
}

// setCookie sets an HttpOnly, Secure, SameSite=Strict cookie on the whole
// site; maxAge < 0 deletes it.
func setCookie(w http.ResponseWriter, name, value string, expires time.Time, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", Expires: expires, MaxAge: maxAge,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode,
	})
}

// newCSRFCookie sets a fresh login CSRF cookie and returns its value, which
// the login form echoes (a double-submit token: another site can neither
// read nor set it).
func newCSRFCookie(w http.ResponseWriter) string {
	var n [24]byte
	_, _ = rand.Read(n[:])
	v := base64.RawURLEncoding.EncodeToString(n[:])
	setCookie(w, csrfCookie, v, time.Time{}, 0)
	return v
}

// localPath returns next when it is a path on this site, else "/".
func localPath(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
