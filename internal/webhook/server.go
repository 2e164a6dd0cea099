package webhook

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// Config configures a Server. Store is required; everything else has a default.
type Config struct {
	// Store keeps the history.
	Store store.Store
	// HMACKey, when set, is the key of the X-Signature HMAC every event must carry.
	HMACKey []byte
	// APIToken is the bearer token of /api/v1; empty disables the API (503).
	APIToken string
	// Cluster reads Flux and workload objects; nil runs without a cluster
	// (phases then follow Flux's events alone).
	Cluster client.Reader
	// Kube serves pods, Kubernetes events and logs; nil answers those with 503.
	Kube kubernetes.Interface
	// Metrics reads the apps' PodMetrics (metrics.k8s.io) for the app
	// pages; nil: the pages say the cluster has no metrics API.
	Metrics metricsclient.Interface
	// Prober runs the checks against the cluster; default a probe.Prober on Cluster.
	Prober probe.Checker
	// Clusters are the other clusters this webhook reads, by their names
	// in platform.yaml: an app in an environment that runs on one of them
	// (Pages.EnvironmentClusters) is checked there, and its page shows
	// its pods, events, logs and use there. An environment on a cluster
	// neither Cluster (named Pages.ClusterName) nor Clusters reads is
	// judged by its events alone. Needs Pages.ClusterName.
	Clusters map[string]Cluster
	// Resolver maps an event's object to its app when the event's metadata
	// does not; default a ClusterResolver on Cluster.
	Resolver Resolver
	// GitHub, when set, receives deployment statuses.
	GitHub *GitHub
	// Concurrency bounds the checks running at once; default 4.
	Concurrency int
	// Backoff between check attempts; default probe.DefaultBackoff.
	Backoff probe.Backoff
	// DefaultTimeout applies while an app's timeout is unknown; default 10m.
	DefaultTimeout time.Duration
	// RecheckInterval is how often rolled-out apps are checked again; default
	// 1m, negative disables.
	RecheckInterval time.Duration
	// FluxNamespace holds the apps' Kustomizations; default flux-system.
	FluxNamespace string
	// Environments are the platform's environments in order (platform.yaml
	// environments): the app page shows an app's release in each side by
	// side, and what each lacks of the one before it.
	Environments []string
	// StreamHeartbeat is the interval of keep-alive comments on the event
	// stream; default 15s. StreamPoll is how often a stream looks for changes
	// written by other replicas; default 2s.
	StreamHeartbeat time.Duration
	StreamPoll      time.Duration
	// MaxBatch bounds the events stored in one transaction; default 256.
	MaxBatch int
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are those
	// of the http.Server HTTPServer returns; defaults DefaultReadHeaderTimeout
	// and the like, negative disables. An event stream lifts the read
	// deadline and moves the write deadline WriteTimeout ahead per write.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// MaxPendingBodyBytes bounds the bytes of event bodies buffered before
	// their signature is checked (each body in flight counts at least 4 KiB);
	// past it an event is answered 503 with Retry-After at once. Default
	// DefaultMaxPendingBodyBytes.
	MaxPendingBodyBytes int64
	// Retention is what the periodic prune keeps of the history; the zero
	// value keeps store.DefaultKeepDeployments per app and
	// store.DefaultKeepAge. PruneInterval is how often it runs (and once at
	// Start); default 1h, negative disables.
	Retention     store.Retention
	PruneInterval time.Duration
	// Clock; default the wall clock.
	Clock probe.Clock
	// Logger; default discard.
	Logger *slog.Logger
	// Registry receives the metrics; default a new registry.
	Registry *prometheus.Registry
	// Pages configures the status pages (pages.go).
	Pages PagesConfig
	// Coordinator divides the apps among the replicas sharing one
	// PostgreSQL store (a started *store.Owners); nil for one replica,
	// which owns every app. Close it after Stop.
	Coordinator Coordinator
}

// Cluster is one more cluster a webhook reads (Config.Clusters): the
// cluster of an environment that does not run on the webhook's own.
type Cluster struct {
	// Reader reads its Flux and workload objects; required.
	Reader client.Reader
	// Kube serves its pods, Kubernetes events and logs; nil: the pages and
	// the API say the cluster serves none.
	Kube kubernetes.Interface
	// Metrics reads its PodMetrics; nil: the pages say it has no metrics
	// API.
	Metrics metricsclient.Interface
	// Prober runs the checks there; default a probe.Prober on Reader,
	// whose reachability requests go where each host resolves to (give a
	// probe.Prober with ConnectTo to send them to this cluster's ingress
	// controller).
	Prober probe.Checker
}

// Coordinator divides the apps among the webhook's replicas: only an app's
// owner runs its checks, writes its phase transitions and reports it to
// GitHub; every replica stores events and serves reads. store.Owners is
// the implementation on PostgreSQL.
type Coordinator interface {
	// Owns reports whether this replica owns the app in the environment
	// ("": no environment) now.
	Owns(app layout.AppRef, env string) bool
	// OwnedSlots returns the slots (store.SlotOf) of the apps it owns.
	OwnedSlots() []int
	// Changed is signalled when this replica gained or lost apps.
	Changed() <-chan struct{}
	// Logged is signalled when any replica committed a phase change.
	Logged() <-chan struct{}
	// Notices delivers what Notify sent, from every replica.
	Notices() <-chan string
	// Notify sends msg to every replica.
	Notify(ctx context.Context, msg string) error
}

func (c *Config) setDefaults() error {
	if c.Store == nil {
		return errors.New("webhook: Config.Store is required")
	}
	if c.GitHub != nil {
		if err := c.GitHub.validate(); err != nil {
			return err
		}
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Backoff.Initial <= 0 {
		c.Backoff = probe.DefaultBackoff()
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = 10 * time.Minute
	}
	if c.RecheckInterval == 0 {
		c.RecheckInterval = time.Minute
	}
	if c.FluxNamespace == "" {
		c.FluxNamespace = "flux-system"
	}
	if err := validateEnvironments(c.Environments); err != nil {
		return err
	}
	if c.StreamHeartbeat <= 0 {
		c.StreamHeartbeat = 15 * time.Second
	}
	if c.StreamPoll <= 0 {
		c.StreamPoll = 2 * time.Second
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.ReadHeaderTimeout, DefaultReadHeaderTimeout}, {&c.ReadTimeout, DefaultReadTimeout}, {&c.WriteTimeout, DefaultWriteTimeout}, {&c.IdleTimeout, DefaultIdleTimeout}} {
		switch {
		case *d.v == 0:
			*d.v = d.def
		case *d.v < 0:
			*d.v = 0
		}
	}
	if c.Retention == (store.Retention{}) {
		c.Retention = store.Retention{KeepPerApp: store.DefaultKeepDeployments, MaxAge: store.DefaultKeepAge}
	}
	if c.PruneInterval == 0 {
		c.PruneInterval = time.Hour
	}
	if c.MaxPendingBodyBytes <= 0 {
		c.MaxPendingBodyBytes = DefaultMaxPendingBodyBytes
	}
	if c.Clock == nil {
		c.Clock = probe.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if c.Prober == nil && c.Cluster != nil {
		c.Prober = &probe.Prober{Client: c.Cluster, Clock: c.Clock, Logger: c.Logger}
	}
	if c.Resolver == nil && c.Cluster != nil {
		c.Resolver = NewClusterResolver(c.Cluster, c.Clock, time.Minute)
	}
	return c.clusterDefaults()
}

// clusterDefaults checks Clusters and gives each its default prober.
func (c *Config) clusterDefaults() error {
	if len(c.Clusters) == 0 {
		return nil
	}
	if c.Pages.ClusterName == "" {
		return errors.New("webhook: Config.Clusters needs Pages.ClusterName, the name of the webhook's own cluster")
	}
	clusters := make(map[string]Cluster, len(c.Clusters))
	for name, cl := range c.Clusters {
		switch {
		case name == "":
			return errors.New("webhook: Config.Clusters has a cluster without a name")
		case name == c.Pages.ClusterName:
			return fmt.Errorf("webhook: Config.Clusters names %s, the webhook's own cluster (Config.Cluster)", name)
		case cl.Reader == nil:
			return fmt.Errorf("webhook: Config.Clusters[%s] has no Reader", name)
		}
		if cl.Prober == nil {
			cl.Prober = &probe.Prober{Client: cl.Reader, Clock: c.Clock, Logger: c.Logger}
		}
		clusters[name] = cl
	}
	c.Clusters = clusters
	return nil
}

// Server is the webhook. Create it with New, serve Handler, call Start, and
// on shutdown call BeginShutdown, shut the HTTP server down, then Stop.
type Server struct {
	cfg      Config
	log      *slog.Logger
	metrics  *metrics
	batcher  *batcher
	tracker  *tracker
	hub      *hub
	github   *githubWorker
	mux      *http.ServeMux
	stopping chan struct{}
	stopOnce sync.Once
	budget   *bodyBudget
	pages    *pages
	// home is the webhook's own cluster (its fields nil without one), and
	// clusters the others it reads, by name (clusterOf chooses).
	home     *clusterClients
	clusters map[string]*clusterClients
	// pins remembers which fleet revision artifact revisions were credited to.
	pins *pinMemory

	// streamMu guards streams and streamsClosed: the write deadlines of
	// the open event streams, set to now when the shutdown begins.
	streamMu      sync.Mutex
	streams       map[*http.ResponseController]struct{}
	streamsClosed bool

	pruneStop     chan struct{}
	pruneDone     chan struct{}
	pruneStopOnce sync.Once

	wakeStop, wakeDone chan struct{}
	wakeStopOnce       sync.Once
}

// New returns a Server; it starts the event writer, which Stop ends.
func New(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		metrics:  newMetrics(cfg.Registry),
		hub:      newHub(),
		stopping: make(chan struct{}),
		budget:   &bodyBudget{max: cfg.MaxPendingBodyBytes},
		pins:     newPinMemory(maxPins),
		streams:  map[*http.ResponseController]struct{}{},
		home:     &clusterClients{name: cfg.Pages.ClusterName, reader: cfg.Cluster, kube: cfg.Kube, metrics: cfg.Metrics, prober: cfg.Prober},
		clusters: map[string]*clusterClients{},
	}
	for name, c := range cfg.Clusters {
		s.clusters[name] = &clusterClients{name: name, reader: c.Reader, kube: c.Kube, metrics: c.Metrics, prober: c.Prober}
	}
	var err error
	if s.pages, err = newPages(&s.cfg); err != nil {
		return nil, err
	}
	s.batcher = newBatcher(cfg.Store, s.now, cfg.MaxBatch)
	if cfg.GitHub != nil {
		s.github = newGitHubWorker(cfg.GitHub, cfg.Store, s.metrics, s.log, cfg.Prober != nil || len(cfg.Clusters) > 0)
	}
	s.tracker = newTracker(s)
	if s.github != nil && cfg.Coordinator != nil {
		s.github.slots = cfg.Coordinator.OwnedSlots
	}
	s.routes()
	return s, nil
}

func (s *Server) now() time.Time { return s.cfg.Clock.Now().UTC() }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /hooks/flux", s.handleFlux)
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	m.HandleFunc("GET /readyz", s.handleReady)
	m.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{}))
	api := func(pattern string, h http.HandlerFunc) { m.Handle(pattern, s.auth(h)) }
	api("GET /api/v1/apps", s.handleApps)
	api("GET /api/v1/apps/{project}/{name}", s.handleApp)
	api("GET /api/v1/apps/{project}/{name}/deployments", s.handleDeployments)
	api("GET /api/v1/apps/{project}/{name}/deploy-status", s.handleDeployStatus)
	api("GET /api/v1/apps/{project}/{name}/pods", s.handlePods)
	api("GET /api/v1/apps/{project}/{name}/events", s.handleEvents)
	api("GET /api/v1/apps/{project}/{name}/logs", s.handleLogs)
	api("GET /api/v1/stream", s.countStream("api", s.limitStream(s.handleStream)))
	api("DELETE /api/v1/sessions/{subject}", s.handleEndSessions)
	s.pageRoutes(m)
	s.mux = m
}

// Handler returns the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.stopping:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
		return
	default:
	}
	if err := s.cfg.Store.Ping(r.Context()); err != nil {
		s.log.Error("store ping", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// auth requires a bearer token: the API token reads every project, a
// viewer token its own projects (the handlers answer another project's
// app as one that does not exist).
func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.pages.sessions.tokens) == 0 {
			writeError(w, http.StatusServiceUnavailable, "the API is disabled: no API token is configured")
			return
		}
		tok, ok := bearerToken(r.Header.Get("Authorization"))
		t, found := s.pages.sessions.token(tok)
		if !ok || !found {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fleetwright"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		v := visitor{grant: t.grant, who: "token:" + hex.EncodeToString(t.sum[:6]), api: t.api}
		h.ServeHTTP(w, r.WithContext(contextWithVisitor(r, v)))
	})
}

// bearerToken parses exactly "Bearer <token>": one space, a token of
// visible characters, nothing around it.
func bearerToken(h string) (string, bool) {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return "", false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] == 0x7f {
			return "", false
		}
	}
	return tok, true
}

// Start resumes the deployments the store holds as active and starts the
// checks and the periodic rechecks. It returns at once.
func (s *Server) Start() error {
	if s.github != nil {
		s.github.start()
	}
	if err := s.tracker.start(); err != nil {
		return err
	}
	if c := s.cfg.Coordinator; c != nil {
		// Phase changes committed by any replica wake this one's streams.
		s.wakeStop, s.wakeDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(s.wakeDone)
			for {
				select {
				case <-s.wakeStop:
					return
				case <-c.Logged():
					s.hub.notify()
				}
			}
		}()
	}
	if s.cfg.PruneInterval > 0 {
		s.pruneStop, s.pruneDone = make(chan struct{}), make(chan struct{})
		go s.pruneLoop(s.pruneStop, s.pruneDone)
	}
	return nil
}

// pruneLoop drops the history the retention does not keep, at Start and
// every PruneInterval.
func (s *Server) pruneLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tk := time.NewTicker(s.cfg.PruneInterval)
	defer tk.Stop()
	for {
		start := time.Now()
		p, err := s.cfg.Store.Prune(ctx, s.cfg.Retention, s.now())
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.log.Error("pruning the history", "err", err)
		case p.Skipped:
			s.log.Debug("another replica is pruning the history")
		case p != (store.Pruned{}):
			s.log.Info("pruned the history", "deployments", p.Deployments, "events", p.Events,
				"phase_changes", p.PhaseChanges, "sessions", p.Sessions, "took", time.Since(start).Round(time.Millisecond).String())
		}
		select {
		case <-stop:
			return
		case <-tk.C:
		}
	}
}

// BeginShutdown makes /readyz fail and ends the event streams, so an HTTP
// server's Shutdown does not wait on them. Register it with
// http.Server.RegisterOnShutdown.
func (s *Server) BeginShutdown() {
	s.stopOnce.Do(func() { close(s.stopping) })
	// A stream whose client does not read is stuck in a write: its deadline
	// passing ends it.
	s.streamMu.Lock()
	s.streamsClosed = true
	for rc := range s.streams {
		_ = rc.SetWriteDeadline(time.Now())
	}
	s.streamMu.Unlock()
}

// openStream registers an event stream; false when the shutdown began.
func (s *Server) openStream(rc *http.ResponseController) bool {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.streamsClosed {
		return false
	}
	s.streams[rc] = struct{}{}
	return true
}

func (s *Server) closeStream(rc *http.ResponseController) {
	s.streamMu.Lock()
	delete(s.streams, rc)
	s.streamMu.Unlock()
}

// extendStream moves a stream's write deadline WriteTimeout ahead, unless
// the shutdown began.
func (s *Server) extendStream(rc *http.ResponseController) bool {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.streamsClosed {
		return false
	}
	var d time.Time
	if s.cfg.WriteTimeout > 0 {
		d = time.Now().Add(s.cfg.WriteTimeout)
	}
	_ = rc.SetWriteDeadline(d)
	return true
}

// Stop commits the events already accepted, cancels the running checks and
// waits for them and for queued GitHub statuses. Call it after the HTTP
// server has shut down, so no request is left waiting for a commit.
func (s *Server) Stop() {
	s.BeginShutdown()
	if s.pruneStop != nil {
		s.pruneStopOnce.Do(func() { close(s.pruneStop) })
		<-s.pruneDone
	}
	if s.wakeStop != nil {
		s.wakeStopOnce.Do(func() { close(s.wakeStop) })
		<-s.wakeDone
	}
	s.batcher.close()
	s.tracker.stop()
	if s.github != nil {
		s.github.stop()
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

type errorBody = api.Error

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}
