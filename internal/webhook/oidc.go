package webhook

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/fleetwright/fleetwright/internal/store"
)

// OIDCConfig configures sign-in through an OpenID Connect provider: the
// authorization code flow with PKCE, its state and nonce checked. Who may
// see which project comes from Access.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL (discovery reads
	// <issuer>/.well-known/openid-configuration).
	Issuer string
	// ClientID and ClientSecret identify the webhook at the provider.
	ClientID     string
	ClientSecret string
	// RedirectURL is the webhook's callback as the browser reaches it:
	// https://<the webhook's host>/auth/callback.
	RedirectURL string
	// Scopes asked for; default openid, email, profile. Some providers
	// (Dex) send groups only when "groups" is asked for too.
	Scopes []string
	// GroupsClaim is the ID token claim holding the person's groups;
	// default "groups".
	GroupsClaim string
	// Access maps groups, emails and subjects to projects and roles.
	Access *Access
	// HTTPClient reaches the provider; default http.DefaultClient.
	HTTPClient *http.Client
}

func (c *OIDCConfig) enabled() bool { return c.Issuer != "" }

func (c *OIDCConfig) validate() error {
	if !c.enabled() {
		return nil
	}
	var errs []error
	if c.ClientID == "" {
		errs = append(errs, errors.New("webhook: OIDC needs a client ID"))
	}
	if u, err := url.Parse(c.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "/auth/callback" {
		errs = append(errs, fmt.Errorf("webhook: the OIDC redirect URL must be http(s)://<host>/auth/callback, not %q", c.RedirectURL))
	}
	if c.Access == nil || len(c.Access.Rules) == 0 {
		errs = append(errs, errors.New("webhook: OIDC needs an access file: without one nobody may see anything"))
	}
	return errors.Join(errs...)
}

// oidcFlowCookie holds one sign-in's state, nonce, PKCE verifier and the
// page to return to, from /auth/login to /auth/callback. SameSite=Lax: the
// callback is a top-level navigation from the provider's site.
const oidcFlowCookie = "__Host-fleetwright-oidc"

// oidcFlowTTL is how long a sign-in at the provider may take.
const oidcFlowTTL = 10 * time.Minute

type oidcFlow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"next"`
}

// oidcClient discovers the provider on first use (the webhook starts while
// the provider is down) and keeps what it found.
type oidcClient struct {
	cfg OIDCConfig

	mu       sync.Mutex
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	oauth    *oauth2.Config
}

func newOIDCClient(c OIDCConfig) *oidcClient {
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	if len(c.Scopes) == 0 {
		c.Scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	if !slices.Contains(c.Scopes, oidc.ScopeOpenID) {
		c.Scopes = append([]string{oidc.ScopeOpenID}, c.Scopes...)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return &oidcClient{cfg: c}
}

func (o *oidcClient) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, o.cfg.HTTPClient)
}

// discover returns the provider's OAuth2 config and ID token verifier.
func (o *oidcClient) discover(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider == nil {
		// The key set fetches keys with the client of this context, later
		// too: it must not be the request's (it ends with the request).
		p, err := oidc.NewProvider(o.ctx(context.WithoutCancel(ctx)), o.cfg.Issuer)
		if err != nil {
			return nil, nil, fmt.Errorf("discovering the OIDC provider %s: %w", o.cfg.Issuer, err)
		}
		o.provider = p
		o.verifier = p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID})
		o.oauth = &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
			RedirectURL: o.cfg.RedirectURL, Scopes: o.cfg.Scopes}
	}
	return o.oauth, o.verifier, nil
}

func randomString() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// handleOIDCLogin sends the browser to the provider with a fresh state,
// nonce and PKCE challenge, remembered in the flow cookie.
func (s *Server) handleOIDCLogin(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	w.Header().Set("Cache-Control", "no-store")
	if s.pages.oidc == nil {
		plainError(w, http.StatusNotFound, "Single sign-on is not configured.")
		return
	}
	oc, _, err := s.pages.oidc.discover(r.Context())
	if err != nil {
		s.log.Error("OIDC sign-in", "err", err)
		plainError(w, http.StatusBadGateway, "The sign-in provider cannot be reached; try again later.")
		return
	}
	f := oidcFlow{State: randomString(), Nonce: randomString(), Verifier: oauth2.GenerateVerifier(), Next: localPath(r.URL.Query().Get("next"))}
	b, _ := json.Marshal(f)
	http.SetCookie(w, &http.Cookie{Name: oidcFlowCookie, Value: base64.RawURLEncoding.EncodeToString(b), Path: "/",
		MaxAge: int(oidcFlowTTL.Seconds()), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, oc.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce)), http.StatusSeeOther)
}

// handleOIDCCallback takes the provider's answer: the state must be the
// flow cookie's, the code is exchanged with the PKCE verifier, the ID
// token must be the provider's, for this client, unexpired and carry the
// flow's nonce. A person the access file grants nothing gets no session.
func (s *Server) handleOIDCCallback(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	w.Header().Set("Cache-Control", "no-store")
	if s.pages.oidc == nil {
		plainError(w, http.StatusNotFound, "Single sign-on is not configured.")
		return
	}
	fail := func(code int, msg string, args ...any) {
		s.pages.views.WithLabelValues("oidc-callback", fmt.Sprint(code)).Inc()
		if len(args) > 0 {
			s.log.Warn("OIDC sign-in refused", append([]any{"reason", msg, "remote", r.RemoteAddr}, args...)...)
		}
		plainError(w, code, msg+" Sign in again: /login")
	}
	c, err := r.Cookie(oidcFlowCookie)
	http.SetCookie(w, &http.Cookie{Name: oidcFlowCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	var f oidcFlow
	if err != nil {
		fail(http.StatusBadRequest, "This sign-in was not started here, or took too long.")
		return
	}
	if raw, err := base64.RawURLEncoding.DecodeString(c.Value); err != nil || json.Unmarshal(raw, &f) != nil || f.State == "" || f.Nonce == "" || f.Verifier == "" {
		fail(http.StatusBadRequest, "This sign-in was not started here, or took too long.")
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1 {
		fail(http.StatusBadRequest, "The sign-in's state does not match.", "why", "state")
		return
	}
	if e := q.Get("error"); e != "" {
		fail(http.StatusUnauthorized, "The sign-in provider refused: "+e+".", "why", "provider", "error", e)
		return
	}
	oc, verifier, err := s.pages.oidc.discover(r.Context())
	if err != nil {
		s.log.Error("OIDC sign-in", "err", err)
		plainError(w, http.StatusBadGateway, "The sign-in provider cannot be reached; try again later.")
		return
	}
	ctx, cancel := context.WithTimeout(s.pages.oidc.ctx(r.Context()), 30*time.Second)
	defer cancel()
	tok, err := oc.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		fail(http.StatusUnauthorized, "The sign-in code was refused by the provider.", "why", "exchange", "err", err)
		return
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		fail(http.StatusBadGateway, "The sign-in provider sent no ID token.", "why", "no id_token")
		return
	}
	idt, err := verifier.Verify(ctx, rawID)
	if err != nil {
		fail(http.StatusUnauthorized, "The ID token is not valid.", "why", "id_token", "err", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		fail(http.StatusUnauthorized, "The ID token's nonce does not match.", "why", "nonce")
		return
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		fail(http.StatusUnauthorized, "The ID token's claims cannot be read.", "why", "claims", "err", err)
		return
	}
	email := verifiedEmail(claims)
	groups := stringsClaim(claims[s.pages.oidc.cfg.GroupsClaim])
	g := s.pages.oidc.cfg.Access.grantFor(idt.Subject, email, groups)
	who := cmp.Or(email, idt.Subject)
	if g.empty() {
		s.log.Warn("OIDC sign-in: no project granted", "subject", idt.Subject, "email", email, "groups", groups)
		s.pages.views.WithLabelValues("oidc-callback", "403").Inc()
		plainError(w, http.StatusForbidden, "Signed in as "+who+", who is granted no project here. Ask for access.")
		return
	}
	v, exp, err := s.pages.sessions.create(r.Context(), store.Session{Kind: store.SessionOIDC, Subject: idt.Subject, Email: email, Groups: groups})
	if err != nil {
		s.log.Error("storing a session", "err", err)
		plainError(w, http.StatusServiceUnavailable, "The sign-in could not be stored; try again.")
		return
	}
	setCookie(w, sessionCookie, v, exp, int(exp.Sub(s.now()).Seconds()))
	s.pages.views.WithLabelValues("oidc-callback", "200").Inc()
	s.log.Info("status page sign-in", "kind", "oidc", "subject", idt.Subject, "email", email, "grant", g.String(), "remote", r.RemoteAddr)
	// The session cookie is SameSite=Strict, and this answer ends a
	// navigation that began on the provider's site: a redirect would load
	// the next page without it. A page of this site that moves on does.
	next := html.EscapeString(f.Next)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=%s"><title>Signed in</title></head><body><p>Signed in as %s. <a href="%s">Continue</a></p></body></html>`,
		next, html.EscapeString(who), next)
}

// verifiedEmail is the email claim when the provider says it verified it.
func verifiedEmail(claims map[string]any) string {
	e, _ := claims["email"].(string)
	if v, _ := claims["email_verified"].(bool); !v {
		return ""
	}
	return e
}

// stringsClaim reads a claim holding a list of strings, or one string.
func stringsClaim(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
