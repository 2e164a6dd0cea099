package probe

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// terminalReasons are Ready=False reasons of a Kustomization that no retry of
// the same revision fixes: the build of the revision fails, or Flux's own
// health check (bounded by the app's timeout) gave up.
var terminalReasons = []string{meta.BuildFailedReason, meta.HealthCheckFailedReason}

// belongsTo reports whether a Flux object's labels or annotations name the app.
func belongsTo(o client.Object, t Target) bool {
	l, a := o.GetLabels(), o.GetAnnotations()
	if l[layout.LabelApp] == t.App.Name && l[layout.LabelProject] == t.App.Project {
		return true
	}
	return a[layout.EventAnnotationPrefix+layout.EventApp] == t.App.Name && a[layout.EventAnnotationPrefix+layout.EventProject] == t.App.Project
}

// ComponentOf returns the component a Flux object of the app stands for.
func ComponentOf(o client.Object, app layout.AppRef) string {
	if c := o.GetLabels()[layout.LabelComponent]; c != "" {
		return c
	}
	if c := o.GetAnnotations()[layout.EventAnnotationPrefix+layout.EventComponent]; c != "" {
		return c
	}
	return strings.TrimPrefix(o.GetName(), layout.ComponentFluxName(app.Project, app.Name, ""))
}

// Sync checks that every Flux Kustomization of the app is Ready and has
// applied the target revision, and that the Kustomization that applies
// those objects (the root one, found by kustomize-controller's owner
// labels; with a source per project, the project's, and the root that
// applies it: see artifactStatus) has applied it too: until then the app's
// Flux objects themselves, their annotations included, may still be the
// previous revision's. It also
// returns the app's timeout: the longest spec.timeout (or, unset,
// spec.interval) of those Kustomizations.
//
// Each component's SpecRevision is its spec-revision annotation once that is
// known to be the target revision's: its applier applied the revision (or
// attempted it and only its health check failed), or, when it has no applier
// in the cluster reading the same source, once it reached a verdict on the
// revision itself.
//
// The check is StateGone when no Kustomization of the app is left, or when
// every one of them is being deleted.
func (p *Prober) Sync(ctx context.Context, t Target) (Check, time.Duration) {
	c := Check{Name: CheckSync}
	if p.Client == nil {
		c.State, c.Message = StateSkipped, "no cluster configured"
		return c, 0
	}
	// The app's Kustomizations live in its project's namespace, or, on a
	// cluster Flux reaches through a kubeconfig and in a fleet rendered
	// before the projects' namespaces held them, in the Flux namespace.
	var list kustomizev1.KustomizationList
	for _, ns := range t.kustomizationNamespaces() {
		var l kustomizev1.KustomizationList
		if err := p.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			c.State, c.Message = StateProgressing, fmt.Sprintf("listing Kustomizations: %v", err)
			return c, 0
		}
		list.Items = append(list.Items, l.Items...)
	}
	listed := make(map[client.ObjectKey]*kustomizev1.Kustomization, len(list.Items))
	for i := range list.Items {
		listed[client.ObjectKeyFromObject(&list.Items[i])] = &list.Items[i]
	}
	var (
		timeout  time.Duration
		deleting []string
		// fromArtifacts: the Kustomizations that read an OCIRepository.
		fromArtifacts []*kustomizev1.Kustomization
	)
	for i := range list.Items {
		k := &list.Items[i]
		if !belongsTo(k, t) {
			continue
		}
		d := k.Spec.Interval.Duration
		if k.Spec.Timeout != nil {
			d = k.Spec.Timeout.Duration
		}
		timeout = max(timeout, d)
		if k.DeletionTimestamp != nil {
			deleting = append(deleting, k.Name)
			c.Components = append(c.Components, ComponentStatus{
				Component: ComponentOf(k, t.App), Kind: kustomizev1.KustomizationKind, Name: k.Name,
				State: StateGone, Message: "being deleted", Revision: k.Status.LastAppliedRevision,
			})
			continue
		}
		if k.Spec.SourceRef.Kind == sourcev1.OCIRepositoryKind {
			fromArtifacts = append(fromArtifacts, k)
			continue
		}
		s := kustomizationStatus(k, t)
		switch applier, err := p.applierOf(ctx, k, listed); {
		case err == nil:
			withApplier(&s, k, applier, t)
		case s.State == StatePassed:
			// Green only once its applier is known to have applied the revision.
			s.State, s.Message = StateProgressing, err.Error()
		}
		c.Components = append(c.Components, s)
	}
	c.Components = append(c.Components, p.artifactStatuses(ctx, fromArtifacts, t)...)
	slices.SortFunc(c.Components, func(a, b ComponentStatus) int {
		return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.Name, b.Name))
	})
	switch {
	case len(c.Components) == 0:
		c.State = StateGone
		c.Message = fmt.Sprintf("no Flux Kustomization of %s in %s", t.App.Ref(), strings.Join(t.kustomizationNamespaces(), " or "))
		return c, 0
	case len(deleting) == len(c.Components):
		slices.Sort(deleting)
		c.State = StateGone
		c.Message = fmt.Sprintf("every Flux Kustomization of %s is being deleted: %s", t.App.Ref(), strings.Join(deleting, ", "))
		return c, timeout
	}
	c.State, c.Message = rollup(c.Components, "Kustomizations")
	return c, timeout
}

// applierOf returns the Kustomization that applied k, by kustomize-controller's
// owner labels, or nil when k has none or that Kustomization is not in the
// cluster. listed holds the Kustomizations already read.
func (p *Prober) applierOf(ctx context.Context, k *kustomizev1.Kustomization, listed map[client.ObjectKey]*kustomizev1.Kustomization) (*kustomizev1.Kustomization, error) {
	l := k.GetLabels()
	key := client.ObjectKey{Namespace: l[layout.AppliedByNamespaceLabel], Name: l[layout.AppliedByNameLabel]}
	if key.Name == "" || key.Namespace == "" {
		return nil, nil
	}
	if a, ok := listed[key]; ok {
		return a, nil
	}
	var a kustomizev1.Kustomization
	err := p.Client.Get(ctx, key, &a)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Kustomization %s, which applies %s: %w", key, k.Name, err)
	}
	return &a, nil
}

// withApplier holds a Kustomization that is green back until its applier
// has applied the target revision too, and sets its spec revision once its
// annotation is known to be the target revision's.
func withApplier(s *ComponentStatus, k, applier *kustomizev1.Kustomization, t Target) {
	spec := cmp.Or(k.GetAnnotations()[layout.EventAnnotationPrefix+layout.EventSpecRevision], k.GetAnnotations()[layout.AnnotationSpecRevision])
	if applier == nil || !sameSource(applier, k) {
		// Nothing in the cluster tells when the annotation was last written:
		// trust it once Flux reached a verdict on the revision.
		if s.State == StatePassed || (s.State == StateFailed && k.Status.LastAttemptedRevision == t.Revision) {
			s.SpecRevision = spec
		}
		return
	}
	if appliedRevision(applier, t.Revision) {
		s.SpecRevision = spec
		return
	}
	if s.State == StatePassed {
		s.State = StateProgressing
		s.Message = fmt.Sprintf("waiting for Kustomization %s/%s, which applies it, to apply %s (it applied %s)",
			applier.Namespace, applier.Name, t.Revision, orNone(applier.Status.LastAppliedRevision))
	}
}

// sameSource reports whether two Kustomizations read the same source, so
// that their revisions compare.
func sameSource(a, b *kustomizev1.Kustomization) bool {
	ns := func(k *kustomizev1.Kustomization) string { return cmp.Or(k.Spec.SourceRef.Namespace, k.Namespace) }
	return a.Spec.SourceRef.Kind == b.Spec.SourceRef.Kind && a.Spec.SourceRef.Name == b.Spec.SourceRef.Name && ns(a) == ns(b)
}

// appliedRevision reports whether a Kustomization has applied rev: it
// finished with it, or applied and pruned it and then only its health check
// failed.
func appliedRevision(k *kustomizev1.Kustomization, rev string) bool {
	if k.Status.LastAppliedRevision == rev {
		return true
	}
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	return k.Status.LastAttemptedRevision == rev && ready != nil && ready.Status == metav1.ConditionFalse &&
		ready.Reason == meta.HealthCheckFailedReason
}

// AppliedRevision returns the revision whose objects a Kustomization last
// applied: the one it finished with or, when it applied and pruned a newer
// one and then only its health check failed, that one ("" when none).
func AppliedRevision(k *kustomizev1.Kustomization) string {
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	if k.Status.LastAttemptedRevision != "" && ready != nil && ready.Status == metav1.ConditionFalse &&
		ready.Reason == meta.HealthCheckFailedReason {
		return k.Status.LastAttemptedRevision
	}
	return k.Status.LastAppliedRevision
}

func kustomizationStatus(k *kustomizev1.Kustomization, t Target) ComponentStatus {
	s := ComponentStatus{
		Component: ComponentOf(k, t.App), Kind: kustomizev1.KustomizationKind, Name: k.Name,
		Revision: k.Status.LastAppliedRevision,
	}
	s.State, s.Message = judgeKustomization(k, t.Revision, "")
	return s
}

// judgeKustomization judges a Kustomization against the revision it must
// have applied, rev: the fleet commit, or the artifact revision of the
// OCIRepository it reads (named by source, for the message).
func judgeKustomization(k *kustomizev1.Kustomization, rev, source string) (State, string) {
	conds := k.Status.Conditions
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	isReady := apimeta.IsStatusConditionTrue(conds, meta.ReadyCondition)
	switch {
	case apimeta.IsStatusConditionTrue(conds, meta.StalledCondition):
		return StateFailed, "stalled: " + apimeta.FindStatusCondition(conds, meta.StalledCondition).Message
	case k.Status.ObservedGeneration < k.Generation:
		return StateProgressing, "waiting for kustomize-controller to observe the latest spec"
	case ready == nil:
		return StateProgressing, "not reconciled yet"
	case isReady && k.Status.LastAppliedRevision == rev:
		return StatePassed, ready.Message
	case isReady && source != "":
		return StateProgressing, fmt.Sprintf("applied %s, waiting for kustomize-controller to apply %s from %s", orNone(k.Status.LastAppliedRevision), rev, source)
	case isReady:
		return StateProgressing, fmt.Sprintf("applied %s, waiting for %s", orNone(k.Status.LastAppliedRevision), rev)
	case ready.Status == metav1.ConditionFalse && slices.Contains(terminalReasons, ready.Reason) && k.Status.LastAttemptedRevision == rev:
		return StateFailed, ready.Reason + ": " + ready.Message
	}
	return StateProgressing, ready.Reason + ": " + ready.Message
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// rollup folds item states into one: failed if any failed, progressing if any
// is not green, else passed.
func rollup(items []ComponentStatus, what string) (State, string) {
	var failed, waiting []string
	for _, it := range items {
		switch it.State {
		case StateFailed:
			failed = append(failed, it.Name+": "+it.Message)
		case StatePassed, StateSkipped:
		default:
			waiting = append(waiting, it.Name+": "+it.Message)
		}
	}
	switch {
	case len(failed) > 0:
		return StateFailed, strings.Join(failed, "; ")
	case len(waiting) > 0:
		return StateProgressing, strings.Join(waiting, "; ")
	}
	return StatePassed, fmt.Sprintf("%d %s ready", len(items), what)
}
