package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PagesConfig configures the status pages: / and /apps/{project}/{name}.
type PagesConfig struct {
	// ViewerToken, when set, signs viewers in to the status pages of every
	// project (the one-token configuration; ViewerTokens name projects).
	// The API token signs in too.
	ViewerToken string
	// ViewerTokens sign viewers in to the status pages, and to the API's
	// reads, of their projects only.
	ViewerTokens []ViewerToken
	// OIDC, when its Issuer is set, signs people in through an OpenID
	// Connect provider, to the projects its Access grants them.
	OIDC OIDCConfig
	// ClusterName is the cluster the webhook watches, as the fleet names it
	// (clusters/<name>); shown per app and used in the rollback commands.
	ClusterName string
	// FleetRepoURL and AppsRepoURL, when set, link revisions to their
	// commits: the fleet revision Flux applied and the apps-repository
	// commit of the spec. A URL with "{commit}" in it has the commit put
	// there; else "/commit/<sha>" is appended (GitHub, Gitea, GitLab).
	FleetRepoURL string
	AppsRepoURL  string
	// SessionTTL is how long a sign-in lasts; default 12h.
	SessionTTL time.Duration
	// PageSize is the number of apps per overview page; default 50.
	PageSize int
	// Streams bounds the live-update streams (limits.go).
	Streams StreamLimits
	// Prices price each app's requested resources on its page.
	Prices Prices
	// EnvironmentClusters maps each environment (platform.yaml
	// environments) to its cluster. The page of an app in an environment
	// on another cluster than ClusterName shows none of this cluster's
	// pods, events, logs, use or cost, which would be another
	// environment's.
	EnvironmentClusters map[string]string
	// PreviewCluster is the cluster pull requests' previews run on
	// (platform.yaml previews.cluster): the cluster of every preview
	// environment ("pr-<N>", layout.PreviewOf), as EnvironmentClusters is
	// of the others.
	PreviewCluster string
}

//go:embed ui/*.html
var pageTemplates embed.FS

//go:embed ui/static
var staticFiles embed.FS

// asset is one static file, served under a name that carries its content's
// hash so it can be cached for good.
type asset struct {
	body        []byte
	contentType string
}

// pages is the state of the status pages.
type pages struct {
	cfg      PagesConfig
	sessions *sessions
	oidc     *oidcClient
	streams  *streamLimiter
	tmpl     map[string]*template.Template
	assets   map[string]asset  // by hashed name
	assetURL map[string]string // by plain name
	origin   *http.CrossOriginProtection
	views    *prometheus.CounterVec
	render   *prometheus.HistogramVec
	opened   *prometheus.CounterVec
	refused  *prometheus.CounterVec
}

func newPages(c *Config) (*pages, error) {
	pc := c.Pages
	if pc.SessionTTL <= 0 {
		pc.SessionTTL = 12 * time.Hour
	}
	if pc.PageSize <= 0 {
		pc.PageSize = 50
	}
	if err := pc.OIDC.validate(); err != nil {
		return nil, err
	}
	if err := pc.Streams.setDefaults(); err != nil {
		return nil, err
	}
	clock := c.Clock
	viewers := slices.Clone(pc.ViewerTokens)
	if pc.ViewerToken != "" {
		viewers = append(viewers, ViewerToken{Token: pc.ViewerToken, Projects: []string{allProjects}})
	}
	for _, v := range viewers {
		if v.Token == "" || v.Token == c.APIToken {
			return nil, errors.New("webhook: a viewer token is empty or the API token: give viewers tokens of their own")
		}
	}
	p := &pages{
		cfg:      pc,
		sessions: newSessions(c.Store, c.APIToken, viewers, pc.SessionTTL, func() time.Time { return clock.Now() }),
		streams:  newStreamLimiter(pc.Streams),
		assets:   map[string]asset{},
		assetURL: map[string]string{},
		origin:   http.NewCrossOriginProtection(),
		views: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetwright_webhook_page_views_total",
			Help: "Status pages served, by page (overview, app, login) and code.",
		}, []string{"page", "code"}),
		render: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fleetwright_webhook_page_render_duration_seconds",
			Help:    "Time to build and render a status page, by page.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"page"}),
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetwright_webhook_streams_opened_total",
			Help: "Server-sent event streams opened, by client (api: /api/v1/stream, page: a status page's live updates).",
		}, []string{"client"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetwright_webhook_streams_refused_total",
			Help: "Server-sent event streams refused (429), by the limit that was full (total, address, person, token).",
		}, []string{"limit"}),
	}
	if err := c.Registry.Register(p.views); err != nil {
		return nil, err
	}
	if err := c.Registry.Register(p.render); err != nil {
		return nil, err
	}
	if err := c.Registry.Register(p.opened); err != nil {
		return nil, err
	}
	if err := c.Registry.Register(p.refused); err != nil {
		return nil, err
	}
	if pc.OIDC.enabled() {
		p.oidc = newOIDCClient(pc.OIDC)
		p.sessions.oidc, p.sessions.access = true, pc.OIDC.Access
	}
	if err := p.loadAssets(); err != nil {
		return nil, err
	}
	if err := p.loadTemplates(); err != nil {
		return nil, err
	}
	if err := p.loadEnvironmentTemplate(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pages) loadAssets() error {
	return fs.WalkDir(staticFiles, "ui/static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFiles.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		base := path.Base(name)
		ext := path.Ext(base)
		hashed := strings.TrimSuffix(base, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		ct := mime.TypeByExtension(ext)
		if ct == "" {
			ct = "application/octet-stream"
		}
		p.assets[hashed] = asset{body: b, contentType: ct}
		p.assetURL[base] = "/ui/static/" + hashed
		return nil
	})
}

func (p *pages) loadTemplates() error {
	funcs := template.FuncMap{
		"asset": func(name string) (string, error) {
			u, ok := p.assetURL[name]
			if !ok {
				return "", fmt.Errorf("no static file %s", name)
			}
			return u, nil
		},
		"time":     fmtTime,
		"duration": fmtDuration,
		"cpu":      fmtCPU,
		"mem":      fmtMem,
		"usageCells": func(v *usageView, r usageRow) usageCellsView {
			return usageCellsView{View: v, Row: r}
		},
	}
	p.tmpl = map[string]*template.Template{}
	for _, name := range []string{"overview", "app", "login", "notfound"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(pageTemplates, "ui/layout.html", "ui/"+name+".html")
		if err != nil {
			return fmt.Errorf("parsing the %s page: %w", name, err)
		}
		p.tmpl[name] = t
	}
	return nil
}

// fmtTime shows a time in UTC to the second; the zero time as "—".
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// fmtDuration rounds a duration for reading.
func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// securityHeaders are sent with every page and static file: scripts and
// styles from this site only (no inline script), no framing, no sniffing.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (s *Server) pageRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /{$}", s.page("overview", s.handleOverview))
	m.HandleFunc("GET /apps/{project}/{name}", s.page("app", s.handleAppPage))
	m.HandleFunc("GET /apps/", s.page("notfound", func(w http.ResponseWriter, r *http.Request) {
		s.notFound(w, r, "No page "+r.URL.Path+".")
	}))
	m.HandleFunc("GET /login", s.handleLoginForm)
	m.HandleFunc("POST /login", s.handleLogin)
	m.HandleFunc("POST /logout", s.handleLogout)
	m.HandleFunc("GET /auth/login", s.handleOIDCLogin)
	m.HandleFunc("GET /auth/callback", s.handleOIDCCallback)
	m.HandleFunc("GET /ui/static/{file}", s.handleStatic)
	m.HandleFunc("GET /ui/stream", s.page("", s.countStream("page", s.limitStream(s.handleStream))))
}

// countStream counts the streams a handler opens.
func (s *Server) countStream(client string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.pages.opened.WithLabelValues(client).Inc()
		h(w, r)
	}
}

type visitorKey struct{}

// page wraps a page handler: security headers, sign-in, and the page's
// metrics (name "" counts nothing).
func (s *Server) page(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-store")
		rec := &codeRecorder{ResponseWriter: w, code: http.StatusOK}
		start := time.Now()
		defer func() {
			if name != "" {
				s.pages.views.WithLabelValues(name, fmt.Sprint(rec.code)).Inc()
				s.pages.render.WithLabelValues(name).Observe(time.Since(start).Seconds())
			}
		}()
		if !s.pages.sessions.enabled() {
			plainError(rec, http.StatusServiceUnavailable, "The status pages are disabled: no API token, viewer token or OIDC provider is configured.")
			return
		}
		v, err := s.pages.sessions.visitorOf(r)
		if err != nil {
			s.log.Error("reading a session", "err", err)
			plainError(rec, http.StatusServiceUnavailable, "Reading the session failed.")
			return
		}
		if !v.signedIn() {
			if r.Header.Get("Authorization") != "" {
				rec.Header().Set("WWW-Authenticate", `Bearer realm="fleetwright"`)
				plainError(rec, http.StatusUnauthorized, "Missing or wrong bearer token.")
				return
			}
			if name == "" {
				plainError(rec, http.StatusUnauthorized, "Sign in first.")
				return
			}
			http.Redirect(rec, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		h(rec, r.WithContext(contextWithVisitor(r, v)))
	}
}

// codeRecorder remembers the status code written, for the metrics; it
// passes Flush and the rest through Unwrap (http.ResponseController).
type codeRecorder struct {
	http.ResponseWriter
	code int
}

func (c *codeRecorder) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeRecorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func plainError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// pageBase is what every page's layout shows.
type pageBase struct {
	Title   string
	Role    string
	Session bool
	CSRF    string
	Cluster string
	// Stream is the live-update stream of the page and Seq the phase
	// change it was rendered at (the stream resumes after it).
	Stream string
	Seq    int64
	Now    time.Time
}

func (s *Server) base(r *http.Request, title string) pageBase {
	v := visitorFrom(r)
	b := pageBase{Title: title, Role: v.grant.top().String(), Cluster: s.pages.cfg.ClusterName, Now: s.now()}
	if v.session != nil {
		b.Session = true
		b.CSRF = s.pages.sessions.csrfToken(*v.session)
	}
	return b
}

// render executes a page into a buffer first, so a template error is a
// clean 500 instead of half a page.
func (s *Server) render(w http.ResponseWriter, code int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages.tmpl[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		s.log.Error("rendering a page", "page", name, "err", err)
		plainError(w, http.StatusInternalServerError, "Rendering the page failed.")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// notFoundView is the site's own 404 page.
type notFoundView struct {
	pageBase
	Message string
	// Project links to the overview of a project the visitor may see.
	Project string
}

// notFound answers 404 with the site's page: its navigation, msg, and a
// way back. It names a project only when the visitor may see it, so that
// it says the same of an app that does not exist and of one the visitor
// may not see.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request, msg string) {
	v := notFoundView{pageBase: s.base(r, "Not found"), Message: msg}
	if p := r.PathValue("project"); p != "" && visitorFrom(r).grant.allows(p) {
		v.Project = p
	}
	s.render(w, http.StatusNotFound, "notfound", v)
}

func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	a, ok := s.pages.assets[r.PathValue("file")]
	if !ok {
		plainError(w, http.StatusNotFound, "No such file.")
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(a.body)
}

// revLink is a revision as a page shows it.
type revLink struct {
	Full, Short, URL string
}

// commitOfRevision returns the commit of a Flux revision such as
// "main@sha1:<hash>" or "sha1:<hash>", or of a bare hash.
func commitOfRevision(rev string) string {
	_, c, ok := strings.Cut(rev, "sha1:")
	if !ok {
		c = rev
	}
	if len(c) < 7 || len(c) > 64 || strings.Trim(c, "0123456789abcdef") != "" {
		return ""
	}
	return c
}

func linkRevision(base, rev string) revLink {
	l := revLink{Full: rev, Short: rev}
	c := commitOfRevision(rev)
	if c == "" {
		return l
	}
	short := c[:min(12, len(c))]
	if ref, _, ok := strings.Cut(rev, "@"); ok {
		l.Short = ref + "@" + short
	} else {
		l.Short = short
	}
	if base != "" {
		if strings.Contains(base, "{commit}") {
			l.URL = strings.ReplaceAll(base, "{commit}", c)
		} else {
			l.URL = strings.TrimSuffix(base, "/") + "/commit/" + c
		}
	}
	return l
}

func contextWithVisitor(r *http.Request, v visitor) context.Context {
	return context.WithValue(r.Context(), visitorKey{}, v)
}

func visitorFrom(r *http.Request) visitor {
	v, _ := r.Context().Value(visitorKey{}).(visitor)
	return v
}
