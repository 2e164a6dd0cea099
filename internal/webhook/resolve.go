package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
)

// Owner is what a Flux object belongs to: its app, and the component,
// spec revision and environment it was rendered for.
type Owner struct {
	App          layout.AppRef
	Component    string
	SpecRevision string
	// Environment is the environment the object was rendered for ("":
	// none).
	Environment string
}

// Resolver finds the app of the object an event is about.
type Resolver interface {
	// Resolve returns ok=false when the object belongs to no app.
	Resolve(ctx context.Context, kind, namespace, name string) (owner Owner, ok bool, err error)
}

// ClusterResolver reads the fleetwright.io/* labels (or the
// event.toolkit.fluxcd.io/* annotations) of a Kustomization, HelmRelease or
// OCIRepository from the cluster, caching answers for a while.
type ClusterResolver struct {
	c     client.Reader
	clock probe.Clock
	ttl   time.Duration

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	owner Owner
	ok    bool
	at    time.Time
}

// NewClusterResolver returns a resolver reading through c; answers are kept for ttl.
func NewClusterResolver(c client.Reader, clock probe.Clock, ttl time.Duration) *ClusterResolver {
	if clock == nil {
		clock = probe.RealClock{}
	}
	return &ClusterResolver{c: c, clock: clock, ttl: ttl, cache: map[string]cached{}}
}

// Resolve implements Resolver.
func (r *ClusterResolver) Resolve(ctx context.Context, kind, namespace, name string) (Owner, bool, error) {
	var obj client.Object
	switch kind {
	case kustomizev1.KustomizationKind:
		obj = &kustomizev1.Kustomization{}
	case helmv2.HelmReleaseKind:
		obj = &helmv2.HelmRelease{}
	case sourcev1.OCIRepositoryKind:
		obj = &sourcev1.OCIRepository{}
	default:
		return Owner{}, false, nil
	}
	key := kind + "/" + namespace + "/" + name
	now := r.clock.Now()
	r.mu.Lock()
	if c, ok := r.cache[key]; ok && now.Sub(c.at) < r.ttl {
		r.mu.Unlock()
		return c.owner, c.ok, nil
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
	var (
		owner Owner
		ok    bool
	)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return Owner{}, false, fmt.Errorf("reading %s: %w", key, err)
	default:
		l, a := obj.GetLabels(), obj.GetAnnotations()
		owner = Owner{
			App: layout.AppRef{
				Project: cmpOr(l[layout.LabelProject], a[layout.EventAnnotationPrefix+layout.EventProject]),
				Name:    cmpOr(l[layout.LabelApp], a[layout.EventAnnotationPrefix+layout.EventApp]),
			},
			SpecRevision: a[layout.EventAnnotationPrefix+layout.EventSpecRevision],
			Environment:  cmpOr(l[layout.LabelEnvironment], a[layout.EventAnnotationPrefix+layout.EventEnvironment]),
		}
		ok = owner.App.Named()
		if ok {
			owner.Component = probe.ComponentOf(obj, owner.App)
		}
	}
	r.mu.Lock()
	r.cache[key] = cached{owner: owner, ok: ok, at: now}
	r.mu.Unlock()
	return owner, ok, nil
}
