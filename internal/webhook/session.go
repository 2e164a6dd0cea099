package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/store"
)

const (
	sessionCookie = "__Host-fleetwright-session"
	csrfCookie    = "__Host-fleetwright-csrf"
	// sessionPrefix versions the session cookie: "v2." and a random
	// secret. (v1 cookies were signed with keys derived from the tokens;
	// they are no longer taken, and their holders sign in again.)
	sessionPrefix = "v2."
)

// tokenEntry is one configured token: the API token (every project) or a
// viewer token (its projects).
type tokenEntry struct {
	sum   [32]byte
	grant grant
	api   bool
}

// sessions keeps the status pages' sign-ins in the store's session list:
// the cookie holds a random secret, the store its hash and who signed in.
// Each request reads the session back, and works out what it may see from
// the configuration of now: signing out deletes the row (a copied cookie is
// refused at once), a token removed from the configuration ends its
// sessions, an access rule removed takes its projects away.
type sessions struct {
	st     store.Store
	ttl    time.Duration
	now    func() time.Time
	tokens []tokenEntry
	// access maps OIDC claims to grants; nil without OIDC.
	access *Access
	oidc   bool
}

func newSessions(st store.Store, apiToken string, viewers []ViewerToken, ttl time.Duration, now func() time.Time) *sessions {
	s := &sessions{st: st, ttl: ttl, now: now}
	if apiToken != "" {
		s.tokens = append(s.tokens, tokenEntry{sum: sha256.Sum256([]byte(apiToken)), grant: fullGrant, api: true})
	}
	for _, v := range viewers {
		var g grant
		g.add(v.Projects, roleViewer)
		s.tokens = append(s.tokens, tokenEntry{sum: sha256.Sum256([]byte(v.Token)), grant: g})
	}
	return s
}

// enabled reports whether anyone can sign in.
func (s *sessions) enabled() bool { return len(s.tokens) > 0 || s.oidc }

// token returns the configured token tok is, comparing its hash in
// constant time against every configured token's.
func (s *sessions) token(tok string) (tokenEntry, bool) {
	if tok == "" {
		return tokenEntry{}, false
	}
	sum := sha256.Sum256([]byte(tok))
	return s.tokenBySum(sum)
}

func (s *sessions) tokenBySum(sum [32]byte) (tokenEntry, bool) {
	var got tokenEntry
	found := 0
	for _, t := range s.tokens {
		if subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1 {
			got, found = t, 1
		}
	}
	return got, found == 1
}

// session is a checked session cookie.
type session struct {
	// secret is the cookie's secret; the store knows its hash.
	secret []byte
	idHash string
}

func hashSecret(secret []byte) string {
	sum := sha256.Sum256(secret)
	return hex.EncodeToString(sum[:])
}

// create stores a new session and returns its cookie value and expiry.
func (s *sessions) create(ctx context.Context, se store.Session) (string, time.Time, error) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	se.IDHash = hashSecret(secret)
	se.CreatedAt = s.now()
	se.ExpiresAt = se.CreatedAt.Add(s.ttl)
	if err := s.st.CreateSession(ctx, se); err != nil {
		return "", time.Time{}, err
	}
	return sessionPrefix + base64.RawURLEncoding.EncodeToString(secret), se.ExpiresAt, nil
}

// errNoSession: the cookie names no live session.
var errNoSession = errors.New("no session")

// check reads a session cookie's session and what it may see now. A store
// failure is returned as it is; anything else wrong is errNoSession.
func (s *sessions) check(ctx context.Context, v string) (session, visitor, error) {
	enc, ok := strings.CutPrefix(v, sessionPrefix)
	if !ok {
		return session{}, visitor{}, errNoSession
	}
	// Strict: one secret has one spelling (the last character's unused
	// bits must be zero).
	secret, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil || len(secret) != 32 {
		return session{}, visitor{}, errNoSession
	}
	se := session{secret: secret, idHash: hashSecret(secret)}
	row, err := s.st.Session(ctx, se.idHash, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return session{}, visitor{}, errNoSession
	}
	if err != nil {
		return session{}, visitor{}, err
	}
	var vis visitor
	switch row.Kind {
	case store.SessionToken:
		sum, err := hex.DecodeString(row.TokenHash)
		if err != nil || len(sum) != 32 {
			return session{}, visitor{}, errNoSession
		}
		t, ok := s.tokenBySum([32]byte(sum))
		if !ok {
			return session{}, visitor{}, errNoSession
		}
		vis = visitor{grant: t.grant, who: "token:" + row.TokenHash[:12]}
	case store.SessionOIDC:
		if !s.oidc {
			return session{}, visitor{}, errNoSession
		}
		vis = visitor{grant: s.access.grantFor(row.Subject, row.Email, row.Groups), who: "person:" + row.Subject, person: true}
	default:
		return session{}, visitor{}, errNoSession
	}
	if vis.grant.empty() {
		return session{}, visitor{}, errNoSession
	}
	vis.session = &se
	return se, vis, nil
}

// end deletes a session: its cookie is refused from now on, wherever it
// was copied to.
func (s *sessions) end(ctx context.Context, se session) error {
	return s.st.DeleteSession(ctx, se.idHash)
}

// csrfToken is the token a session's forms carry: an HMAC of a fixed
// string keyed by the session's secret, which only the session's holder
// (the HttpOnly cookie) and the server know.
func (s *sessions) csrfToken(se session) string {
	m := hmac.New(sha256.New, se.secret)
	m.Write([]byte("fleetwright status page csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF compares a form's token with the session's in constant time.
func (s *sessions) checkCSRF(se session, tok string) bool {
	want := s.csrfToken(se)
	return subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1
}

// visitor is who asks: a bearer token's holder or a session's.
type visitor struct {
	grant   grant
	session *session
	// who names the visitor for the stream limits and the logs: the
	// token's hash prefix or the person's subject.
	who string
	// person: signed in through the OIDC provider.
	person bool
	// api: the API token.
	api bool
}

// signedIn reports whether the visitor may see anything.
func (v visitor) signedIn() bool { return !v.grant.empty() }

// visitorOf authenticates a request: a bearer token, else the session
// cookie. A wrong token or cookie is an anonymous visitor; err is a store
// failure.
func (s *sessions) visitorOf(r *http.Request) (visitor, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, _ := bearerToken(h)
		t, ok := s.token(tok)
		if !ok {
			return visitor{}, nil
		}
		return visitor{grant: t.grant, who: "token:" + hex.EncodeToString(t.sum[:6]), api: t.api}, nil
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return visitor{}, nil
	}
	_, v, err := s.check(r.Context(), c.Value)
	if errors.Is(err, errNoSession) {
		return visitor{}, nil
	}
	return v, err
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
