package webhook

import (
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/store"
)

// loginView is the sign-in form.
type loginView struct {
	pageBase
	Next  string
	CSRF  string
	Error string
	// Tokens: a token can sign in; OIDC: the provider can.
	Tokens, OIDC bool
	// OIDCURL starts the sign-in at the provider.
	OIDCURL string
	// PlainHTTP: the form came over plain HTTP to a host other than this
	// machine, where browsers drop the Secure session cookie.
	PlainHTTP bool
}

// plainHTTP reports whether r came over plain HTTP from elsewhere than
// loopback (a proxy that ended TLS says so in X-Forwarded-Proto).
func plainHTTP(r *http.Request) bool {
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, code int, next, msg string) {
	securityHeaders(w.Header())
	w.Header().Set("Cache-Control", "no-store")
	s.pages.views.WithLabelValues("login", strconv.Itoa(code)).Inc()
	if !s.pages.sessions.enabled() {
		plainError(w, http.StatusServiceUnavailable, "The status pages are disabled: no API token, viewer token or OIDC provider is configured.")
		return
	}
	v := loginView{pageBase: pageBase{Title: "Sign in", Cluster: s.pages.cfg.ClusterName, Now: s.now()},
		Next: localPath(next), CSRF: newCSRFCookie(w), Error: msg, PlainHTTP: plainHTTP(r),
		Tokens: len(s.pages.sessions.tokens) > 0, OIDC: s.pages.oidc != nil}
	if v.OIDC {
		v.OIDCURL = "/auth/login?next=" + url.QueryEscape(v.Next)
	}
	s.render(w, code, "login", v)
}

func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	s.loginPage(w, r, http.StatusOK, r.URL.Query().Get("next"), "")
}

// handleLogin checks the token typed into the form and sets a session
// cookie. The form must come from this site: the browser's Sec-Fetch-Site
// or Origin says so, and it echoes the CSRF cookie.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := s.pages.origin.Check(r); err != nil {
		plainError(w, http.StatusForbidden, "Cross-site sign-in refused.")
		return
	}
	if err := r.ParseForm(); err != nil {
		plainError(w, http.StatusBadRequest, "The sign-in form could not be read.")
		return
	}
	next := r.PostForm.Get("next")
	c, err := r.Cookie(csrfCookie)
	form := r.PostForm.Get("csrf")
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) != 1 {
		s.loginPage(w, r, http.StatusForbidden, next, "The form expired: sign in again.")
		return
	}
	t, ok := s.pages.sessions.token(r.PostForm.Get("token"))
	if !ok {
		s.loginPage(w, r, http.StatusUnauthorized, next, "Wrong token.")
		return
	}
	v, exp, err := s.pages.sessions.create(r.Context(), store.Session{Kind: store.SessionToken, TokenHash: hex.EncodeToString(t.sum[:])})
	if err != nil {
		s.log.Error("storing a session", "err", err)
		plainError(w, http.StatusServiceUnavailable, "The sign-in could not be stored; try again.")
		return
	}
	setCookie(w, sessionCookie, v, exp, int(exp.Sub(s.now()).Seconds()))
	setCookie(w, csrfCookie, "", time.Unix(0, 0), -1)
	s.log.Info("status page sign-in", "kind", "token", "token", hex.EncodeToString(t.sum[:6]), "grant", t.grant.String(), "remote", r.RemoteAddr)
	http.Redirect(w, r, localPath(next), http.StatusSeeOther)
}

// handleLogout drops the session cookie. It needs the session's CSRF token.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := s.pages.origin.Check(r); err != nil {
		plainError(w, http.StatusForbidden, "Cross-site sign-out refused.")
		return
	}
	if err := r.ParseForm(); err != nil {
		plainError(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	se, _, err := s.pages.sessions.check(r.Context(), c.Value)
	if errors.Is(err, errNoSession) {
		// Signed out already (or expired): drop the cookie.
		setCookie(w, sessionCookie, "", time.Unix(0, 0), -1)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	if err != nil {
		s.log.Error("reading a session", "err", err)
		plainError(w, http.StatusServiceUnavailable, "Reading the session failed.")
		return
	}
	if !s.pages.sessions.checkCSRF(se, r.PostForm.Get("csrf")) {
		plainError(w, http.StatusForbidden, "Sign-out refused: the form did not come from this session.")
		return
	}
	// The session ends in the store: a copy of the cookie is refused too.
	if err := s.pages.sessions.end(r.Context(), se); err != nil {
		s.log.Error("ending a session", "err", err)
		plainError(w, http.StatusServiceUnavailable, "Signing out failed; try again.")
		return
	}
	setCookie(w, sessionCookie, "", time.Unix(0, 0), -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// handleEndSessions ends every status page session of a person (their OIDC
// subject) at once, wherever they signed in: for someone who left, or
// whose device was lost. Only the API token may.
func (s *Server) handleEndSessions(w http.ResponseWriter, r *http.Request) {
	if !visitorFrom(r).api {
		writeError(w, http.StatusForbidden, "only the API token ends sessions")
		return
	}
	sub := r.PathValue("subject")
	n, err := s.cfg.Store.DeleteSessionsOf(r.Context(), sub)
	if err != nil {
		s.storeError(w, err)
		return
	}
	s.log.Info("status page sessions ended", "subject", sub, "sessions", n)
	writeJSON(w, http.StatusOK, map[string]int64{"ended": n})
}
