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
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and annotations that tie an object to an app.
const (
	LabelApp       = "fleetwright.io/app"
	LabelProject   = "fleetwright.io/project"
	LabelComponent = "fleetwright.io/component"

	AnnotationPrefix       = "event.toolkit.fluxcd.io/"
	AnnotationApp          = AnnotationPrefix + "app"
	AnnotationProject      = AnnotationPrefix + "project"
	AnnotationComponent    = AnnotationPrefix + "component"
	AnnotationSpecRevision = AnnotationPrefix + "spec-revision"
)

// terminalReasons are Ready=False reasons of a Kustomization that no retry of
// the same revision fixes: the build of the revision fails, or Flux's own
// health check (bounded by the app's timeout) gave up.
var terminalReasons = []string{meta.BuildFailedReason, meta.HealthCheckFailedReason}

// belongsTo reports whether a Flux object's labels or annotations name the app.
func belongsTo(o client.Object, t Target) bool {
	l, a := o.GetLabels(), o.GetAnnotations()
	if l[LabelApp] == t.App && l[LabelProject] == t.Project {
		return true
	}
	return a[AnnotationApp] == t.App && a[AnnotationProject] == t.Project
}

// ComponentOf returns the component a Flux object of the app stands for.
func ComponentOf(o client.Object, project, app string) string {
	if c := o.GetLabels()[LabelComponent]; c != "" {
		return c
	}
	if c := o.GetAnnotations()[AnnotationComponent]; c != "" {
		return c
	}
	return strings.TrimPrefix(o.GetName(), project+"-"+app+"-")
}

// Sync checks that every Flux Kustomization of the app is Ready and has
// applied the target revision. It also returns the app's timeout: the
// longest spec.timeout (or, unset, spec.interval) of those Kustomizations.
func (p *Prober) Sync(ctx context.Context, t Target) (Check, time.Duration) {
	c := Check{Name: CheckSync}
	if p.Client == nil {
		c.State, c.Message = StateSkipped, "no cluster configured"
		return c, 0
	}
	var list kustomizev1.KustomizationList
	if err := p.Client.List(ctx, &list, client.InNamespace(t.fluxNamespace())); err != nil {
		c.State, c.Message = StateProgressing, fmt.Sprintf("listing Kustomizations: %v", err)
		return c, 0
	}
	var timeout time.Duration
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
		c.Components = append(c.Components, kustomizationStatus(k, t))
	}
	slices.SortFunc(c.Components, func(a, b ComponentStatus) int {
		return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.Name, b.Name))
	})
	if len(c.Components) == 0 {
		c.State = StateProgressing
		c.Message = fmt.Sprintf("no Flux Kustomization of %s/%s in %s yet", t.Project, t.App, t.fluxNamespace())
		return c, 0
	}
	c.State, c.Message = rollup(c.Components, "Kustomizations")
	return c, timeout
}

func kustomizationStatus(k *kustomizev1.Kustomization, t Target) ComponentStatus {
	s := ComponentStatus{
		Component: ComponentOf(k, t.Project, t.App), Kind: kustomizev1.KustomizationKind, Name: k.Name,
		Revision: k.Status.LastAppliedRevision,
	}
	conds := k.Status.Conditions
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	isReady := apimeta.IsStatusConditionTrue(conds, meta.ReadyCondition)
	switch {
	case apimeta.IsStatusConditionTrue(conds, meta.StalledCondition):
		s.State = StateFailed
		s.Message = "stalled: " + apimeta.FindStatusCondition(conds, meta.StalledCondition).Message
	case k.Status.ObservedGeneration < k.Generation:
		s.State, s.Message = StateProgressing, "waiting for kustomize-controller to observe the latest spec"
	case ready == nil:
		s.State, s.Message = StateProgressing, "not reconciled yet"
	case isReady && k.Status.LastAppliedRevision == t.Revision:
		s.State, s.Message = StatePassed, ready.Message
	case isReady:
		s.State = StateProgressing
		s.Message = fmt.Sprintf("applied %s, waiting for %s", orNone(k.Status.LastAppliedRevision), t.Revision)
	case ready.Status == metav1.ConditionFalse && slices.Contains(terminalReasons, ready.Reason) && k.Status.LastAttemptedRevision == t.Revision:
		s.State, s.Message = StateFailed, ready.Reason+": "+ready.Message
	default:
		s.State, s.Message = StateProgressing, ready.Reason+": "+ready.Message
	}
	return s
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
