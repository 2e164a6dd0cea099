package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// MaxEventBytes is the largest event body accepted.
const MaxEventBytes = 1 << 20

// SignatureHeader carries the HMAC of the body sent by Flux's generic-hmac provider.
const SignatureHeader = "X-Signature"

// Event metadata keys read for mapping (also accepted with the
// event.toolkit.fluxcd.io/ prefix).
const (
	metaEnvironment = layout.EventEnvironment
	metaPrefix      = eventv1.Group + "/"
)

// Results of an ingest request, used as the metrics label.
const (
	resultApplied      = "applied"
	resultIgnored      = "ignored"
	resultDuplicate    = "duplicate"
	resultUnauthorized = "unauthorized"
	resultTooLarge     = "too_large"
	resultMalformed    = "malformed"
	resultError        = "error"
	resultOverloaded   = "overloaded"
)

var errSignature = errors.New("signature does not match the body")

// verifySignature checks header "sha256=<hex>" (or sha384, sha512) against
// the HMAC of body under key.
func verifySignature(key, body []byte, header string) error {
	if header == "" {
		return fmt.Errorf("missing %s header", SignatureHeader)
	}
	algo, sig, ok := strings.Cut(header, "=")
	if !ok {
		return fmt.Errorf("%s header is not <algorithm>=<hex>", SignatureHeader)
	}
	var h func() hash.Hash
	switch strings.ToLower(algo) {
	case "sha256":
		h = sha256.New
	case "sha384":
		h = sha512.New384
	case "sha512":
		h = sha512.New
	default:
		return fmt.Errorf("unsupported signature algorithm %q", algo)
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("signature is not hex: %w", err)
	}
	m := hmac.New(h, key)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil), want) {
		return errSignature
	}
	return nil
}

// Sign returns the X-Signature header value Flux's generic-hmac provider
// sends for body: "sha256=<hex HMAC-SHA256>".
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// decodeEvent parses and checks a Flux event.
func decodeEvent(body []byte) (eventv1.Event, error) {
	var ev eventv1.Event
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(&ev); err != nil {
		return ev, fmt.Errorf("malformed event JSON: %w", err)
	}
	if dec.More() {
		return ev, errors.New("malformed event JSON: trailing data after the event object")
	}
	var missing []string
	if ev.InvolvedObject.Kind == "" {
		missing = append(missing, "involvedObject.kind")
	}
	if ev.InvolvedObject.Name == "" {
		missing = append(missing, "involvedObject.name")
	}
	if ev.Reason == "" {
		missing = append(missing, "reason")
	}
	if len(missing) > 0 {
		return ev, fmt.Errorf("invalid event: missing %s", strings.Join(missing, ", "))
	}
	return ev, nil
}

// meta reads a metadata key with or without the event.toolkit.fluxcd.io/ prefix.
func metaValue(ev *eventv1.Event, key string) string {
	if v := ev.Metadata[key]; v != "" {
		return v
	}
	return ev.Metadata[metaPrefix+key]
}

// revisionOf returns the event's source revision.
func revisionOf(ev *eventv1.Event) string {
	if r := ev.Metadata[eventv1.MetaRevisionKey]; r != "" {
		return r
	}
	r, _ := ev.GetRevision()
	return r
}

// dedupeKey identifies an event by object, revision, reason and message,
// and environment: the same object at the same revision in two
// environments (clusters) says the same words about two deployments.
func dedupeKey(ev *eventv1.Event, revision, env string) string {
	h := sha256.New()
	for _, s := range []string{ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, revision, ev.Reason, ev.Message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if env != "" {
		// Outside environments the key stays what it was before them.
		h.Write([]byte("environment\x00" + env))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Flux reasons that end a rollout of the revision: a build that fails, a
// health check that gave up (Flux bounds it by the app's timeout), and a Helm
// install or upgrade that failed or was rolled back.
var terminalReasons = []string{"BuildFailed", "HealthCheckFailed", "InstallFailed", "UpgradeFailed", "RollbackSucceeded", "UninstallSucceeded"}

// health classifies an event into the component health it reports.
func health(ev *eventv1.Event) (string, bool) {
	terminal := slices.Contains(terminalReasons, ev.Reason)
	switch {
	case ev.Severity == eventv1.EventSeverityError || terminal:
		return store.HealthFailed, terminal
	case strings.HasSuffix(ev.Reason, "Succeeded"):
		return store.HealthHealthy, false
	}
	return store.HealthProgressing, false
}

// ingestResponse is the JSON answer of POST /hooks/flux.
type ingestResponse struct {
	Status       string `json:"status"`
	EventID      int64  `json:"event_id,omitempty"`
	DeploymentID int64  `json:"deployment_id,omitempty"`
	Project      string `json:"project,omitempty"`
	App          string `json:"app,omitempty"`
	Environment  string `json:"environment,omitempty"`
	Error        string `json:"error,omitempty"`
	// Reason says why an ignored event counts for no app.
	Reason string `json:"reason,omitempty"`
}

func (s *Server) handleFlux(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	result := resultError
	defer func() {
		s.metrics.events.WithLabelValues(result).Inc()
		s.metrics.ingestSeconds.Observe(time.Since(start).Seconds())
	}()
	reject := func(code int, res string, resp ingestResponse) {
		result = res
		// The rest of the body is not worth reading: close the connection.
		w.Header().Set("Connection", "close")
		writeJSON(w, code, resp)
	}
	if r.ContentLength > MaxEventBytes {
		reject(http.StatusRequestEntityTooLarge, resultTooLarge, ingestResponse{Status: "rejected", Error: fmt.Sprintf("event body over %d bytes", MaxEventBytes)})
		return
	}
	b, err := readBody(r.Body, MaxEventBytes, s.budget)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			reject(http.StatusRequestEntityTooLarge, resultTooLarge, ingestResponse{Status: "rejected", Error: fmt.Sprintf("event body over %d bytes", MaxEventBytes)})
		case errors.Is(err, errBudget):
			w.Header().Set("Retry-After", retryAfterSeconds)
			reject(http.StatusServiceUnavailable, resultOverloaded, ingestResponse{Status: "rejected", Error: "too many events in flight, retry later"})
		default:
			reject(http.StatusBadRequest, resultMalformed, ingestResponse{Status: "rejected", Error: "reading body: " + err.Error()})
		}
		return
	}
	defer b.release()
	body := b.bytes()
	if len(s.cfg.HMACKey) > 0 {
		if err := verifySignature(s.cfg.HMACKey, body, r.Header.Get(SignatureHeader)); err != nil {
			s.log.Warn("event rejected", "reason", err.Error(), "remote", r.RemoteAddr)
			reject(http.StatusUnauthorized, resultUnauthorized, ingestResponse{Status: "rejected", Error: err.Error()})
			return
		}
		b.authenticated()
	}
	ev, err := decodeEvent(body)
	if err != nil {
		result = resultMalformed
		writeJSON(w, http.StatusBadRequest, ingestResponse{Status: "rejected", Error: err.Error()})
		return
	}
	rec, project, err := s.toRecord(r.Context(), &ev, body)
	if err != nil {
		s.log.Error("mapping event", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, ingestResponse{Status: "error", Error: "mapping event to an app failed"})
		return
	}
	got, err := s.batcher.submit(r.Context(), rec)
	if err != nil {
		s.log.Error("storing event", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, ingestResponse{Status: "error", Error: "storing event failed"})
		return
	}
	resp := ingestResponse{EventID: got.EventID, DeploymentID: got.DeploymentID, Project: rec.App.Project, App: rec.App.Name, Environment: rec.Environment}
	switch {
	case got.Duplicate:
		result, resp.Status = resultDuplicate, "duplicate"
		writeJSON(w, http.StatusOK, resp)
	case rec.App.Name == "":
		result, resp.Status, resp.Reason = resultIgnored, "ignored", rec.IgnoredReason
		if project != "" {
			h, _ := health(&ev)
			s.tracker.notify(notice{app: layout.AppRef{Project: project}, projectWide: true, health: h})
		}
		writeJSON(w, http.StatusAccepted, resp)
	default:
		result, resp.Status = resultApplied, "applied"
		s.tracker.notify(notice{deploymentID: got.DeploymentID, app: rec.App, env: rec.Environment, newDeployment: got.NewDeployment,
			component: rec.Kind + "/" + cmpOr(rec.Component, rec.Name), health: rec.Health, terminal: rec.Terminal})
		writeJSON(w, http.StatusOK, resp)
	}
}

// toRecord maps a Flux event to the store's event, finding its app. An
// event the app it names cannot be attributed to (see attribution), or of
// no app, is stored as ignored with the reason; project is the project
// whose own Flux objects the event is about (see projectEventOf), if any.
func (s *Server) toRecord(ctx context.Context, ev *eventv1.Event, body []byte) (rec store.Event, project string, err error) {
	now := s.now()
	rev := revisionOf(ev)
	rec = store.Event{
		ReceivedAt: now, EventTime: ev.Timestamp.UTC(),
		Kind: ev.InvolvedObject.Kind, Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name,
		Severity: ev.Severity, Reason: ev.Reason, Message: ev.Message, Revision: rev,
		Controller: ev.ReportingController, Body: body,
		App: layout.AppRef{Project: metaValue(ev, layout.EventProject), Name: metaValue(ev, layout.EventApp)}, Component: metaValue(ev, layout.EventComponent),
		SpecRevision: metaValue(ev, layout.EventSpecRevision), Environment: metaValue(ev, metaEnvironment),
	}
	if ev.Timestamp.IsZero() {
		rec.EventTime = now
	}
	if !rec.App.Named() && s.cfg.Resolver != nil {
		owner, ok, err := s.cfg.Resolver.Resolve(ctx, ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name)
		if err != nil {
			return rec, "", err
		}
		if ok {
			rec.App = owner.App
			rec.Component = cmpOr(rec.Component, owner.Component)
			rec.SpecRevision = cmpOr(rec.SpecRevision, owner.SpecRevision)
			rec.Environment = cmpOr(rec.Environment, owner.Environment)
		}
	}
	rec.DedupeKey = dedupeKey(ev, rev, rec.Environment)
	if !rec.App.Named() {
		// An event of no known app is kept as metadata: its body would let
		// anyone who can post fill the disk.
		project := projectEventOf(ev)
		if project == "" {
			return ignored(rec, "the object belongs to no app"), "", nil
		}
		if why := s.attribution(&ev.InvolvedObject, layout.AppRef{Project: project}, "", ""); why != "" {
			s.log.Warn("event ignored", "reason", why)
			return ignored(rec, why), "", nil
		}
		return ignored(rec, "an event of project "+project+"'s own Flux objects, which belong to no app"), project, nil
	}
	if why := s.attribution(&ev.InvolvedObject, rec.App, rec.Component, rec.Environment); why != "" {
		s.log.Warn("event ignored", "reason", why)
		return ignored(rec, why), "", nil
	}
	if env := rec.Environment; env != "" && !validEnvironment(env) {
		// Its history would be one no platform has, and its name is
		// the sender's to choose: kept as metadata only.
		why := fmt.Sprintf("environment %q is not a DNS label (lower-case letters, digits and '-', at most 63)", clip(env))
		s.log.Warn("event ignored", "reason", why)
		return ignored(rec, why), "", nil
	}
	rec.Health, rec.Terminal = health(ev)
	// A HelmRelease reports its chart version, not a fleet revision: its events
	// join the app's newest deployment. So does an event with no revision.
	rec.JoinLatest = ev.InvolvedObject.Kind == "HelmRelease" || rev == ""
	if kind := ev.InvolvedObject.Kind; probe.IsArtifactRevision(rev) && (kind == kustomizev1.KustomizationKind || kind == sourcev1.OCIRepositoryKind) {
		fleet, err := s.fleetRevisionOf(ctx, kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, rec.App, rec.Environment, rev)
		switch {
		case errors.Is(err, errNoFleetRevision):
			s.log.Info("event of an artifact revision no deployment pins", "object", kind+"/"+ev.InvolvedObject.Namespace+"/"+ev.InvolvedObject.Name,
				"revision", rev, "app", store.AppKey(rec.App, rec.Environment))
			rec.Health, rec.Terminal = "", false
			return ignored(rec, "artifact revision "+rev+" is pinned by no fleet revision of app "+store.AppKey(rec.App, rec.Environment)), "", nil
		case err != nil:
			return rec, "", err
		}
		// The deployment is the fleet revision's; the artifact revision
		// stays in the key, so that the same report of two pins is two events.
		rec.Revision = fleet
		rec.DedupeKey = dedupeKey(ev, fleet+" "+rev, rec.Environment)
	}
	return rec, "", nil
}

// ignored is rec stored as counting for no app, for the reason why.
func ignored(rec store.Event, why string) store.Event {
	rec.App, rec.Component, rec.SpecRevision, rec.Environment, rec.Body = layout.AppRef{}, "", "", "", nil
	rec.IgnoredReason = why
	return rec
}

// attribution says why an event of obj may not count for the app (app
// empty: for the project) its metadata or labels name, or "" when it may.
// Only two kinds of object speak for a project: those in the project's
// namespace (ProjectNamespace; where render puts each project's Flux
// objects in it, those too), which only the project's own fleet and
// service account write; and the Flux objects render writes for the
// project in the Flux namespace, which no project can write: a
// Kustomization or OCIRepository named after the component
// (layout.ComponentFluxName), or the project's own (layout.ProjectFluxName).
// The name and namespace come from the event's involvedObject, which
// the controller that reports on the object fills in; the app and
// project come from the object's annotations or labels, which whoever
// writes the object chooses: so a team's HelmRelease annotated with
// another project's name is its own team's, and counts for no app.
//
// A pull request's preview of the project lives in a namespace of its own
// (layout.PreviewNamespace), which the pull request's specs write: its
// objects speak for the project's preview of that pull request (the
// environment layout.PreviewEnvironment) and for nothing else, and a
// preview's environment is spoken for only from there. An event of no
// app (env empty) of the project's own Flux objects may come from there
// too.
func (s *Server) attribution(obj *corev1.ObjectReference, app layout.AppRef, component, env string) string {
	project := app.Project
	ns := probe.ProjectNamespace(project)
	object := clip(obj.Kind) + " " + clip(obj.Namespace) + "/" + clip(obj.Name)
	if pr, ok := layout.PreviewOfNamespace(project, obj.Namespace); ok {
		if want := layout.PreviewEnvironment(pr); app.Name != "" && env != want {
			return fmt.Sprintf("%s lives in namespace %s, pull request %d's preview of %s: it speaks only for environment %s, not %q",
				object, obj.Namespace, pr, clip(project), want, clip(env))
		}
		return ""
	}
	claim := "project " + clip(project)
	if app.Name != "" {
		claim = "app " + layout.AppRef{Project: clip(project), Name: clip(app.Name)}.Ref()
	}
	if pr, ok := layout.PreviewOf(env); ok {
		return fmt.Sprintf("%s names %s in environment %s, which lives in namespace %s only", object, claim, env, layout.PreviewNamespace(project, pr))
	}
	if obj.Namespace == ns {
		return ""
	}
	if obj.Namespace != s.cfg.FluxNamespace {
		return fmt.Sprintf("%s names %s but is neither in the project's namespace %s nor in the Flux namespace %s",
			object, claim, clip(ns), s.cfg.FluxNamespace)
	}
	if obj.Kind != kustomizev1.KustomizationKind && obj.Kind != sourcev1.OCIRepositoryKind {
		return fmt.Sprintf("%s names %s, but in the Flux namespace only a Kustomization or OCIRepository render wrote speaks for a project",
			object, claim)
	}
	want := layout.ProjectFluxName(project)
	if app.Name != "" {
		want = layout.ComponentFluxName(project, app.Name, component)
	}
	switch {
	case obj.Name == want:
		return ""
	case app.Name != "" && component == "" && strings.HasPrefix(obj.Name, want) && len(obj.Name) > len(want):
		// No component named: any of the app's.
		return ""
	}
	return fmt.Sprintf("%s names %s, but render names that one %s", object, claim, clip(want))
}

// clip shortens a string from an event for a reason: at most 100 bytes,
// cut at a rune.
func clip(s string) string {
	const most = 100
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// projectEventOf returns the project whose own Flux objects an event is
// about (the OCIRepository and Kustomization project-<p> that apply the
// apps' Flux objects from the project's artifact, annotated with the
// project alone), or "". Such an event belongs to no app: it is stored as
// ignored, and wakes the checks of the project's apps, whose sync checks
// read the project's objects (see probe's project links), when the
// object may speak for the project (attribution).
func projectEventOf(ev *eventv1.Event) string {
	project := metaValue(ev, layout.EventProject)
	switch {
	case project == "" || metaValue(ev, layout.EventApp) != "":
		return ""
	case ev.InvolvedObject.Kind != kustomizev1.KustomizationKind && ev.InvolvedObject.Kind != sourcev1.OCIRepositoryKind:
		return ""
	case ev.InvolvedObject.Name != layout.ProjectFluxName(project):
		return ""
	}
	return project
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// batcher stores events in group commits: concurrent requests share one
// transaction (and one fsync), and each learns its own outcome.
type batcher struct {
	st       store.Store
	now      func() time.Time
	maxBatch int
	in       chan *pendingEvent
	mu       sync.RWMutex
	closed   bool
	done     chan struct{}
}

type pendingEvent struct {
	ev   store.Event
	done chan batchResult
}

type batchResult struct {
	rec store.Recorded
	err error
}

var errStopping = errors.New("server is shutting down")

func newBatcher(st store.Store, now func() time.Time, maxBatch int) *batcher {
	if maxBatch <= 0 {
		maxBatch = 256
	}
	b := &batcher{st: st, now: now, maxBatch: maxBatch, in: make(chan *pendingEvent, maxBatch), done: make(chan struct{})}
	go b.run()
	return b
}

// submit stores ev and returns once it is committed.
func (b *batcher) submit(ctx context.Context, ev store.Event) (store.Recorded, error) {
	p := &pendingEvent{ev: ev, done: make(chan batchResult, 1)}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return store.Recorded{}, errStopping
	}
	select {
	case b.in <- p:
	case <-ctx.Done():
		b.mu.RUnlock()
		return store.Recorded{}, ctx.Err()
	}
	b.mu.RUnlock()
	// Once queued the event is committed even if the client goes away, so the
	// outcome is awaited regardless of ctx.
	r := <-p.done
	return r.rec, r.err
}

// close stops taking events, commits those queued and waits for the writer.
func (b *batcher) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.in)
	}
	b.mu.Unlock()
	<-b.done
}

func (b *batcher) run() {
	defer close(b.done)
	batch := make([]*pendingEvent, 0, b.maxBatch)
	evs := make([]store.Event, 0, b.maxBatch)
	for p := range b.in {
		batch = append(batch[:0], p)
	fill:
		for len(batch) < b.maxBatch {
			select {
			case q, ok := <-b.in:
				if !ok {
					break fill
				}
				batch = append(batch, q)
			default:
				break fill
			}
		}
		evs = evs[:0]
		for _, q := range batch {
			evs = append(evs, q.ev)
		}
		// A commit is not abandoned halfway by a shutdown: its requests wait for it.
		recs, err := b.st.RecordEvents(context.Background(), evs, b.now())
		if err != nil && len(batch) > 1 {
			// One bad event must not fail its neighbours: store one by one.
			for _, q := range batch {
				r, err := b.st.RecordEvents(context.Background(), []store.Event{q.ev}, b.now())
				if err != nil {
					q.done <- batchResult{err: err}
					continue
				}
				q.done <- batchResult{rec: r[0]}
			}
			continue
		}
		for i, q := range batch {
			if err != nil {
				q.done <- batchResult{err: err}
				continue
			}
			q.done <- batchResult{rec: recs[i]}
		}
	}
}

// validEnvironment reports whether env can name an environment: a DNS
// label (RFC 1123), as platform.yaml's environment names are.
func validEnvironment(env string) bool {
	if len(env) == 0 || len(env) > 63 || env[0] == '-' || env[len(env)-1] == '-' {
		return false
	}
	for i := 0; i < len(env); i++ {
		c := env[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
