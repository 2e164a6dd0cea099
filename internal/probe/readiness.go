package probe

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ProgressDeadlineExceeded is the reason of a Deployment's Progressing
// condition once its rollout has stalled.
const ProgressDeadlineExceeded = "ProgressDeadlineExceeded"

// AppSelector selects the Kubernetes objects rendered for an app.
func AppSelector(app layout.AppRef) client.MatchingLabels {
	return client.MatchingLabels{layout.LabelApp: app.Name, layout.LabelProject: app.Project}
}

// Readiness checks every Deployment and StatefulSet of the app by kstatus
// rules. paused is true when the app has such workloads and all of them ask
// for zero replicas.
func (p *Prober) Readiness(ctx context.Context, t Target) (Check, bool) {
	c := Check{Name: CheckReadiness}
	if p.Client == nil {
		c.State, c.Message = StateSkipped, "no cluster configured"
		return c, false
	}
	var list appsv1.DeploymentList
	if err := p.Client.List(ctx, &list, client.InNamespace(t.namespace()), AppSelector(t.App)); err != nil {
		c.State, c.Message = StateProgressing, fmt.Sprintf("listing Deployments: %v", err)
		return c, false
	}
	var sets appsv1.StatefulSetList
	if err := p.Client.List(ctx, &sets, client.InNamespace(t.namespace()), AppSelector(t.App)); err != nil {
		c.State, c.Message = StateProgressing, fmt.Sprintf("listing StatefulSets: %v", err)
		return c, false
	}
	if len(list.Items)+len(sets.Items) == 0 {
		c.State, c.Message = StatePassed, "the app has no Deployments"
		return c, false
	}
	for i := range list.Items {
		c.Components = append(c.Components, DeploymentStatus(&list.Items[i]))
	}
	for i := range sets.Items {
		c.Components = append(c.Components, StatefulSetStatus(&sets.Items[i]))
	}
	zero := 0
	for _, s := range c.Components {
		if *s.Desired == 0 {
			zero++
		}
	}
	slices.SortFunc(c.Components, func(a, b ComponentStatus) int {
		return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.Name, b.Name))
	})
	what := "Deployments"
	if len(sets.Items) > 0 {
		what = "workloads"
	}
	if zero == len(c.Components) {
		c.State, c.Message = StatePassed, "paused: every "+what[:len(what)-1]+" is scaled to 0 replicas"
		return c, true
	}
	c.State, c.Message = rollup(c.Components, what)
	return c, false
}

// StatefulSetStatus judges one StatefulSet: current when the controller has
// observed its generation, every replica runs the update revision and
// desired = ready = available replicas.
func StatefulSetStatus(d *appsv1.StatefulSet) ComponentStatus {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	st := d.Status
	s := ComponentStatus{
		Component: d.Labels[layout.LabelComponent], Kind: "StatefulSet", Name: d.Name,
		Desired: &desired, Updated: &st.UpdatedReplicas, Available: &st.AvailableReplicas,
		Images: podImages(&d.Spec.Template.Spec),
	}
	counts := fmt.Sprintf("%d/%d updated, %d/%d ready", st.UpdatedReplicas, desired, st.ReadyReplicas, desired)
	partitioned := d.Spec.UpdateStrategy.RollingUpdate != nil && d.Spec.UpdateStrategy.RollingUpdate.Partition != nil && *d.Spec.UpdateStrategy.RollingUpdate.Partition > 0
	switch {
	case st.ObservedGeneration < d.Generation:
		s.State, s.Message = StateProgressing, "waiting for the StatefulSet controller to observe the latest spec"
	case desired == 0 && st.Replicas == 0:
		s.State, s.Message = StatePassed, "scaled to 0 replicas"
	case st.Replicas > desired:
		s.State, s.Message = StateProgressing, fmt.Sprintf("%s, %d replicas pending termination", counts, st.Replicas-desired)
	case !partitioned && d.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType && (st.UpdatedReplicas < desired || (st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision)):
		s.State, s.Message = StateProgressing, counts
	case st.ReadyReplicas < desired || st.AvailableReplicas < desired:
		s.State, s.Message = StateProgressing, counts
	default:
		s.State, s.Message = StatePassed, counts
	}
	return s
}

// DeploymentStatus judges one Deployment: current when the controller has
// observed its generation and updated = available = desired replicas with no
// old replicas left; failed when its rollout passed the progress deadline.
func DeploymentStatus(d *appsv1.Deployment) ComponentStatus {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	st := d.Status
	s := ComponentStatus{
		Component: d.Labels[layout.LabelComponent], Kind: "Deployment", Name: d.Name,
		Desired: &desired, Updated: &st.UpdatedReplicas, Available: &st.AvailableReplicas,
		Images: podImages(&d.Spec.Template.Spec),
	}
	counts := fmt.Sprintf("%d/%d updated, %d/%d available", st.UpdatedReplicas, desired, st.AvailableReplicas, desired)
	for _, cond := range st.Conditions {
		if cond.Type == appsv1.DeploymentProgressing && cond.Reason == ProgressDeadlineExceeded {
			s.State, s.Message = StateFailed, fmt.Sprintf("progress deadline exceeded (%s): %s", counts, cond.Message)
			return s
		}
	}
	switch {
	case st.ObservedGeneration < d.Generation:
		s.State, s.Message = StateProgressing, "waiting for the Deployment controller to observe the latest spec"
	case desired == 0 && st.Replicas == 0:
		s.State, s.Message = StatePassed, "scaled to 0 replicas"
	case st.UpdatedReplicas < desired:
		s.State, s.Message = StateProgressing, counts
	case st.Replicas > st.UpdatedReplicas:
		s.State, s.Message = StateProgressing, fmt.Sprintf("%s, %d old replicas pending termination", counts, st.Replicas-st.UpdatedReplicas)
	case st.AvailableReplicas < desired:
		s.State, s.Message = StateProgressing, counts
	default:
		s.State, s.Message = StatePassed, counts
		for _, cond := range st.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionFalse {
				s.State, s.Message = StateProgressing, "not available: "+cond.Message
			}
		}
	}
	return s
}

// podImages lists the images of a pod spec's containers (init containers
// first), as a workload's release names them.
func podImages(p *corev1.PodSpec) []string {
	var out []string
	for _, c := range p.InitContainers {
		out = append(out, c.Image)
	}
	for _, c := range p.Containers {
		out = append(out, c.Image)
	}
	return out
}
