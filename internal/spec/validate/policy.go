package validate

import (
	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/policy"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// reportPolicy adds a policy check's finding with the severity
// platform.yaml gives the check: an error, a warning, or nothing when the
// check is off. key reports it at the field's key rather than its value.
func reportPolicy(doc *load.Document, sev spec.Severity, at load.Path, key bool, msg string, ps *load.Problems) {
	if sev != spec.SeverityError && sev != spec.SeverityWarning {
		return
	}
	pos := doc.Pos(at)
	if key {
		pos = doc.KeyPos(at)
	}
	// The message as it is: it is read on every component that lacks a
	// probe or a request, and formatting it again would cost as much.
	ps.AddAt(doc, pos, at, diag.Severity(sev), msg)
}

// checkPolicy runs on a workload, job or cronjob the checks of
// platform.yaml's policy block that verify runs on its rendered objects
// (internal/policy decides them and words them), at the spec's lines and
// with the same severities: require_requests and require_probes on each
// container, require_tls on the ingress, production_replicas on the count
// (checkReplicasPolicy).
func checkPolicy(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	w, doc, pol := c.WorkloadSpec, a.Doc, plat.Policy
	longRunning := c.Type == spec.TypeWorkload
	check := func(ctr policy.Container, p load.Path, own *spec.Resources) {
		if m := policy.MissingRequests(ctr); m != "" {
			rp := p
			if own != nil {
				rp = p.Child("resources")
			}
			reportPolicy(doc, pol.Severity(spec.PolicyRequireRequests), rp, true, m, ps)
		}
		if m := policy.MissingProbes(ctr, longRunning); m != "" {
			reportPolicy(doc, pol.Severity(spec.PolicyRequireProbes), p, true, m, ps)
		}
	}
	main := policy.Container{Name: c.Name, Role: policy.RoleContainer,
		Requests: plat.Requested(a.Project, w.Resources)}
	if w.HealthCheck != nil && longRunning {
		main.Readiness, main.Liveness = true, true
	}
	if w.Probes != nil {
		main.Readiness = main.Readiness || w.Probes.Readiness != nil
		main.Liveness = main.Liveness || w.Probes.Liveness != nil
	}
	check(main, at, w.Resources)
	for i, x := range w.InitContainers {
		check(policy.Container{Name: x.Name, Role: policy.RoleInit, Requests: plat.Requested(a.Project, x.Resources)},
			at.Child("init_containers").Child(i), x.Resources)
	}
	for i, x := range w.Sidecars {
		ctr := policy.Container{Name: x.Name, Role: policy.RoleSidecar, Requests: plat.Requested(a.Project, x.Resources)}
		if x.Probes != nil {
			ctr.Readiness, ctr.Liveness = x.Probes.Readiness != nil, x.Probes.Liveness != nil
		}
		check(ctr, at.Child("sidecars").Child(i), x.Resources)
	}
	if !longRunning {
		return
	}
	if in := w.Ingress; in != nil && in.Enabled && in.TLS != nil && !*in.TLS {
		reportPolicy(doc, pol.Severity(spec.PolicyRequireTLS), at.Child("ingress").Child("tls"), false, policy.NoTLS, ps)
	}
	// An app of a platform with environments is checked here as written,
	// on no cluster of its own: each environment's copy is checked on its
	// cluster (replicasPolicy).
	if len(plat.Environments) == 0 {
		checkReplicasPolicy(a, c, at, plat, ps)
	}
}

// checkReplicasPolicy is production_replicas on a workload of the app's
// cluster: at least two replicas on a production cluster, unless an
// autoscaler scales it or the app is paused.
func checkReplicasPolicy(a *load.LoadedApp, c *spec.Component, at load.Path, plat *spec.Platform, ps *load.Problems) {
	w := c.WorkloadSpec
	if c.Type != spec.TypeWorkload || w == nil {
		return
	}
	cl := plat.ClusterByName(a.Cluster)
	if cl == nil || !cl.Production {
		return
	}
	replicas, p := int64(1), at
	if w.Replicas != nil {
		replicas, p = int64(*w.Replicas), at.Child("replicas")
	}
	if m := policy.FewReplicas(replicas, a.Cluster, w.Autoscaling != nil, a.Spec.Paused); m != "" {
		reportPolicy(a.Doc, plat.Policy.Severity(spec.PolicyProductionReplicas), p, w.Replicas == nil, m, ps)
	}
}
