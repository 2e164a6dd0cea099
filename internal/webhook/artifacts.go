package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// With fleet.artifacts each component's Kustomization reads its own
// OCIRepository, pinned by digest in the app's file of the fleet (in the
// cluster folder, or in its project's Flux folder, packed as the project's
// artifact, with a source per project). Its
// events then carry the artifact's revision (sha256:<hex>), not the fleet
// commit a deployment is keyed by, and a fleet commit only makes the
// components it changed reconcile. artifacts.go maps such an event to the
// fleet revision it belongs to; docs/webhook.md ("Which deployment") states
// the rules.

// maxPins bounds the artifact revisions pinMemory holds: a few per component
// of a fleet of thousands of apps.
const maxPins = 1 << 14

// pinKey names one artifact revision of one component of an app.
type pinKey struct {
	app, name, digest string
}

// pinMemory remembers the fleet revision each artifact revision of a
// component was credited to, for the events that follow. It holds at most
// max entries and forgets the oldest first; what the deployments' sync
// checks recorded (probe.ComponentStatus.Artifact) is the lasting record.
type pinMemory struct {
	mu    sync.Mutex
	revs  map[pinKey]string
	order []pinKey
	max   int
	// byRev indexes revs by app and fleet revision.
	byRev map[[2]string]map[pinKey]struct{}
}

func newPinMemory(max int) *pinMemory {
	return &pinMemory{revs: map[pinKey]string{}, byRev: map[[2]string]map[pinKey]struct{}{}, max: max}
}

func (m *pinMemory) get(k pinKey) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.revs[k]
	return r, ok
}

func (m *pinMemory) put(k pinKey, rev string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.revs[k]; ok {
		m.unindex(k, old)
	} else {
		m.order = append(m.order, k)
		for len(m.order) > m.max {
			drop := m.order[0]
			m.order = m.order[1:]
			m.unindex(drop, m.revs[drop])
			delete(m.revs, drop)
		}
	}
	m.revs[k] = rev
	ix := [2]string{k.app, rev}
	if m.byRev[ix] == nil {
		m.byRev[ix] = map[pinKey]struct{}{}
	}
	m.byRev[ix][k] = struct{}{}
}

func (m *pinMemory) unindex(k pinKey, rev string) {
	ix := [2]string{k.app, rev}
	delete(m.byRev[ix], k)
	if len(m.byRev[ix]) == 0 {
		delete(m.byRev, ix)
	}
}

// of returns the artifact revisions credited to the app's fleet revision
// rev, by Kustomization name.
func (m *pinMemory) of(app, rev string) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k := range m.byRev[[2]string{app, rev}] {
		out[k.name] = k.digest
	}
	return out
}

// recordedArtifacts returns the artifact revisions a deployment's sync
// check recorded as its fleet revision's, by Kustomization name.
func recordedArtifacts(d store.Deployment) map[string]string {
	out := map[string]string{}
	for _, c := range decodeResult(d).Check(probe.CheckSync).Components {
		if c.Artifact != "" {
			out[c.Name] = c.Artifact
		}
	}
	return out
}

// artifactsOf returns what is known of the artifact revisions d's fleet
// revision pins, by Kustomization name: what d's checks recorded, over what
// its events were credited with, over what the deployment before it
// recorded (a fleet revision leaves the components it does not change as
// they were).
func (s *Server) artifactsOf(ctx context.Context, d store.Deployment) map[string]string {
	out := map[string]string{}
	if prev, err := s.cfg.Store.DeploymentsIn(ctx, d.App, d.Environment, 1, d.ID); err == nil && len(prev) == 1 {
		for k, v := range recordedArtifacts(prev[0]) {
			out[k] = v
		}
	}
	for k, v := range s.ownArtifacts(d) {
		out[k] = v
	}
	return out
}

// ownArtifacts is artifactsOf without what is inherited: what d's checks
// recorded, over what its events were credited with.
func (s *Server) ownArtifacts(d store.Deployment) map[string]string {
	out := s.pins.of(store.AppKey(d.App, d.Environment), d.Revision)
	for k, v := range recordedArtifacts(d) {
		out[k] = v
	}
	return out
}

// errNoFleetRevision: the event's artifact revision belongs to no fleet
// revision the webhook can name.
var errNoFleetRevision = errors.New("no fleet revision known for the artifact revision")

// fleetRevisionOf returns the fleet revision an event of the app's (in
// environment env)
// Kustomization or OCIRepository about artifact revision rev belongs to:
//
//  1. the app's current deployment's, when it is known to pin rev (unless
//     the app was deleted: re-added, it starts a new deployment), or
//     inherited the pin from the deployment before it and the
//     OCIRepository still pins rev;
//  2. when the OCIRepository still pins rev: the current deployment's if
//     rev was credited before (it is still pinned, so no later revision
//     changed it); otherwise this is the first word of a new pin, and the
//     revision is the one the root Kustomization (which applies the app's
//     OCIRepositories, or, with a source per project, the project's
//     OCIRepository their Kustomization applies them from) has applied;
//  3. when the OCIRepository pins something else, or is gone: the
//     revision rev was credited to before, or the newest recent deployment
//     whose checks recorded rev. An app being deleted (its Kustomization
//     or OCIRepository gone or going) reports to its current deployment;
//     an event for a digest no longer pinned that no deployment knows
//     belongs to none (errNoFleetRevision), rather than to the current
//     revision.
//
// The cluster read is the one the environment runs on (clusterOf).
// Without one nothing tells which fleet revision pinned the artifact: the
// event is the current deployment's, or none's.
func (s *Server) fleetRevisionOf(ctx context.Context, kind, namespace, name string, app layout.AppRef, env, rev string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var c client.Reader
	if cl, _ := s.clusterOf(env); cl != nil {
		c = cl.reader
	}
	if c == nil {
		latest, ok, err := s.currentDeployment(ctx, app, env)
		switch {
		case err != nil:
			return "", err
		case !ok:
			return "", errNoFleetRevision
		}
		return latest.Revision, nil
	}
	namespace = cmp.Or(namespace, s.cfg.FluxNamespace)
	appKey := store.AppKey(app, env)
	digest := probe.ArtifactDigest(rev)
	key := pinKey{app: appKey, name: name, digest: digest}
	// The current deployment known to pin the digest needs no cluster
	// read: most reports are a component's periodic ones.
	latest, hasLatest, err := s.currentDeployment(ctx, app, env)
	if err != nil {
		return "", err
	}
	// A deleted app's last deployment is no app's current one: re-added,
	// the app's artifacts may well be the same digests.
	live := hasLatest && latest.Phase != store.PhaseDeleted
	var latestPin string
	if live {
		if own := s.ownArtifacts(latest)[name]; probe.ArtifactDigest(own) == digest {
			return latest.Revision, nil
		}
		// What the deployment inherited counts once the cluster says the
		// digest is still pinned: a late report of the digest the
		// deployment's revision replaced is not its.
		latestPin = s.artifactsOf(ctx, latest)[name]
	}
	o, going, err := readPin(ctx, c, kind, namespace, name)
	if err != nil {
		return "", err
	}
	current := !going && probe.ArtifactDigest(probe.Pinned(o)) == digest

	remembered, seen := s.pins.get(key)
	switch {
	case current && live && probe.ArtifactDigest(latestPin) == digest:
		return latest.Revision, nil
	case current && live && latestPin == "" && seen:
		return latest.Revision, nil
	case current:
		applied, err := s.appliedRevisionOf(ctx, c, o)
		if err != nil {
			return "", err
		}
		if applied == "" {
			if live && latestPin == "" {
				return latest.Revision, nil
			}
			return "", errNoFleetRevision
		}
		s.pins.put(key, applied)
		return applied, nil
	case seen:
		return remembered, nil
	}
	recent, err := s.cfg.Store.DeploymentsIn(ctx, app, env, 20, 0)
	if err != nil {
		return "", fmt.Errorf("reading the deployments of %s: %w", appKey, err)
	}
	for _, d := range recent {
		if probe.ArtifactDigest(recordedArtifacts(d)[name]) == digest {
			s.pins.put(key, d.Revision)
			return d.Revision, nil
		}
	}
	if going && hasLatest {
		return latest.Revision, nil
	}
	return "", errNoFleetRevision
}

// readPin reads the OCIRepository an event's object (kind
// namespace/name: the OCIRepository itself, or a Kustomization that reads
// it) stands for, and whether it, or that Kustomization, is gone or going.
func readPin(ctx context.Context, c client.Reader, kind, namespace, name string) (*sourcev1.OCIRepository, bool, error) {
	source := client.ObjectKey{Namespace: namespace, Name: name}
	going := false
	if kind == kustomizev1.KustomizationKind {
		var k kustomizev1.Kustomization
		switch err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &k); {
		case apierrors.IsNotFound(err):
			going = true
		case err != nil:
			return nil, false, fmt.Errorf("reading Kustomization %s/%s: %w", namespace, name, err)
		default:
			going = k.DeletionTimestamp != nil
			if src, ok := probe.SourceOf(&k); ok {
				source = src
			}
		}
	}
	var o sourcev1.OCIRepository
	switch err := c.Get(ctx, source, &o); {
	case apierrors.IsNotFound(err):
		going = true
	case err != nil:
		return nil, false, fmt.Errorf("reading OCIRepository %s: %w", source, err)
	default:
		going = going || o.DeletionTimestamp != nil
	}
	return &o, going, nil
}

// currentDeployment returns the app's current deployment in the
// environment, if it has one.
func (s *Server) currentDeployment(ctx context.Context, app layout.AppRef, env string) (store.Deployment, bool, error) {
	a, err := s.cfg.Store.App(ctx, app, env)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Deployment{}, false, nil
	case err != nil:
		return store.Deployment{}, false, fmt.Errorf("reading app %s: %w", store.AppKey(app, env), err)
	}
	d, err := s.cfg.Store.Deployment(ctx, a.DeploymentID)
	if err != nil {
		return store.Deployment{}, false, fmt.Errorf("reading the current deployment of %s: %w", store.AppKey(app, env), err)
	}
	return d, true, nil
}

// settlePoll is how often appliedRevisionOf reads a root Kustomization
// that is applying a revision again, until the ingest's deadline.
const settlePoll = 200 * time.Millisecond

// appliedRevisionOf returns the fleet revision whose objects the
// Kustomization that applied o (kustomize-controller's owner labels) last
// applied: the revision that pins o as it is now. "" when o names none in
// the cluster, or when that is not known.
//
// While that Kustomization is applying another revision (Ready Unknown,
// lastAttemptedRevision ahead), o may already be the new revision's while
// the status still names the old one: it is read again until it settles,
// and the event is refused (Flux posts it again) if it does not in time.
//
// With a source per project, o is applied by its project's Kustomization
// (project-<p>) from the project's artifact: its revision is then the
// fleet revision that pins the project's OCIRepository to the artifact
// that Kustomization applied, once it applied the one the OCIRepository
// pins (read again while it has not; "" when it failed to).
//
// o is read again at the end: had the revision found changed it meanwhile,
// o's pin is that revision's no more, and the event is refused (Flux posts
// it again, and the digest is then judged as no longer pinned).
func (s *Server) appliedRevisionOf(ctx context.Context, c client.Reader, o *sourcev1.OCIRepository) (string, error) {
	rev, err := s.appliedRevisionThrough(ctx, c, o, true)
	if err != nil || rev == "" {
		return rev, err
	}
	var now sourcev1.OCIRepository
	switch err := c.Get(ctx, client.ObjectKeyFromObject(o), &now); {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("OCIRepository %s/%s went while the fleet revision that pins it was read", o.Namespace, o.Name)
	case err != nil:
		return "", fmt.Errorf("reading OCIRepository %s/%s again: %w", o.Namespace, o.Name, err)
	case probe.ArtifactDigest(probe.Pinned(&now)) != probe.ArtifactDigest(probe.Pinned(o)):
		return "", fmt.Errorf("OCIRepository %s/%s changed from %s to %s while the fleet revision that pins it was read",
			o.Namespace, o.Name, probe.Pinned(o), probe.Pinned(&now))
	}
	return rev, nil
}

func (s *Server) appliedRevisionThrough(ctx context.Context, c client.Reader, o *sourcev1.OCIRepository, throughProject bool) (string, error) {
	l := o.GetLabels()
	key := client.ObjectKey{Namespace: l[layout.AppliedByNamespaceLabel], Name: l[layout.AppliedByNameLabel]}
	if key.Name == "" || key.Namespace == "" {
		return "", nil
	}
	applying := ""
	stillApplying := func() error {
		return fmt.Errorf("the Kustomization %s, which applies OCIRepository %s/%s, is still applying %s: which fleet revision pins %s is not known yet",
			key, o.Namespace, o.Name, applying, probe.Pinned(o))
	}
	for {
		var applier kustomizev1.Kustomization
		switch err := c.Get(ctx, key, &applier); {
		case apierrors.IsNotFound(err):
			return "", nil
		case err != nil && applying != "" && ctx.Err() != nil:
			return "", stillApplying()
		case err != nil:
			return "", fmt.Errorf("reading Kustomization %s, which applies OCIRepository %s/%s: %w", key, o.Namespace, o.Name, err)
		}
		var busy bool
		applying, busy = probe.Applying(&applier)
		src, fromArtifact := probe.SourceOf(&applier)
		switch {
		case busy:
		case fromArtifact && !throughProject:
			return "", nil
		case fromArtifact:
			var po sourcev1.OCIRepository
			switch err := c.Get(ctx, src, &po); {
			case apierrors.IsNotFound(err):
				return "", nil
			case err != nil:
				return "", fmt.Errorf("reading OCIRepository %s, which Kustomization %s reads: %w", src, key, err)
			}
			pin := probe.Pinned(&po)
			if pin != "" && probe.ArtifactDigest(probe.AppliedRevision(&applier)) == probe.ArtifactDigest(pin) {
				return s.appliedRevisionThrough(ctx, c, &po, false)
			}
			if failing(applier.Status.Conditions, applier.Generation) || failing(po.Status.Conditions, po.Generation) {
				// It stays at an artifact an earlier fleet revision pinned.
				return "", nil
			}
			// Not yet applied what its source pins.
			applying = cmpOr(pin, "its source's artifact")
		case !probe.IsArtifactRevision(probe.AppliedRevision(&applier)):
			return probe.AppliedRevision(&applier), nil
		default:
			return "", nil
		}
		select {
		case <-ctx.Done():
			return "", stillApplying()
		case <-s.cfg.Clock.After(settlePoll):
		}
	}
}

// failing reports whether a Flux object's Ready condition is False for
// its current generation, or it is Stalled.
func failing(conds []metav1.Condition, generation int64) bool {
	if apimeta.IsStatusConditionTrue(conds, meta.StalledCondition) {
		return true
	}
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	return ready != nil && ready.Status == metav1.ConditionFalse && ready.ObservedGeneration >= generation
}
