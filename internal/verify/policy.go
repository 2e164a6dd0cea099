package verify

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/policy"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// SeverityOff turns a policy check off.
const SeverityOff = Severity(spec.PolicyOff)

// Policy is the severity of each policy check.
type Policy struct {
	RequireDigests     Severity
	ForbidLatest       Severity
	RequireRequests    Severity
	RequireTLS         Severity
	RequireProbes      Severity
	ProductionReplicas Severity
}

// DefaultPolicy is what applies when platform.yaml does not set a check:
// a mutable :latest (or missing) tag fails; the rest warn, so that a
// platform team turns each into an error when its fleet is ready.
var DefaultPolicy = PolicyOf(nil)

// PolicyOf is the severity platform.yaml's policy gives each check (the
// spec's Policy.Severity, which validate asks too).
func PolicyOf(p *spec.Policy) Policy {
	return Policy{
		RequireDigests:     Severity(p.Severity(spec.PolicyRequireDigests)),
		ForbidLatest:       Severity(p.Severity(spec.PolicyForbidLatest)),
		RequireRequests:    Severity(p.Severity(spec.PolicyRequireRequests)),
		RequireTLS:         Severity(p.Severity(spec.PolicyRequireTLS)),
		RequireProbes:      Severity(p.Severity(spec.PolicyRequireProbes)),
		ProductionReplicas: Severity(p.Severity(spec.PolicyProductionReplicas)),
	}
}

const pausedAnnotation = layout.AnnotationPausedCount

// longRunning are the workload kinds whose containers should have probes.
var longRunning = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true, "apps/ReplicaSet": true, "/Pod": true,
}

// checkPolicy runs the policy checks on an object.
func (r *run) checkPolicy(o *object) []Finding {
	var out []Finding
	pol := r.policy
	add := func(check Check, sev Severity, field, format string, args ...any) {
		if sev != SeverityOff {
			out = append(out, r.finding(o, check, sev, field, fmt.Sprintf(format, args...)))
		}
	}
	gvk := gvkOf(o.root)
	kind := gvk.Group + "/" + gvk.Kind
	for _, c := range containers(o.root, gvk) {
		image := c.n.Get("image").Text()
		if image != "" {
			if !validate.PinnedByDigest(image) {
				add(CheckRequireDigests, pol.RequireDigests, c.path+".image", "image %s is not pinned by digest (policy require_digests)", image)
			}
			if validate.UsesLatestTag(image) {
				add(CheckForbidLatest, pol.ForbidLatest, c.path+".image", "%s", validate.ForbidLatestMessage(image))
			}
		}
		pc := policy.Container{Name: c.n.Get("name").Text(), Role: policy.RoleContainer}
		switch {
		case c.sidecar:
			pc.Role = policy.RoleSidecar
		case c.init:
			pc.Role = policy.RoleInit
		}
		req, _ := c.n.Path("resources.requests")
		for _, res := range []string{"cpu", "memory"} {
			if !req.Get(res).IsNull() {
				pc.Requests = append(pc.Requests, res)
			}
		}
		pc.Readiness, pc.Liveness = !c.n.Get("readinessProbe").IsNull(), !c.n.Get("livenessProbe").IsNull()
		if m := policy.MissingRequests(pc); m != "" {
			add(CheckRequireRequests, pol.RequireRequests, c.path+".resources.requests", "%s", m)
		}
		// Probes watch what runs as long as the pod: not an init container,
		// which runs to completion, nor a Job's pods.
		if m := policy.MissingProbes(pc, longRunning[kind]); m != "" {
			add(CheckRequireProbes, pol.RequireProbes, c.path, "%s", m)
		}
	}
	if kind == "networking.k8s.io/Ingress" {
		out = append(out, r.ingressTLS(o, pol.RequireTLS)...)
	}
	return out
}

// ingressTLS checks that every host of an Ingress is served over TLS.
func (r *run) ingressTLS(o *object, sev Severity) []Finding {
	if sev == SeverityOff {
		return nil
	}
	spec := o.root.Get("spec")
	tls := spec.Get("tls")
	if tls == nil || tls.Kind != yamlx.SeqNode || len(tls.Kids) == 0 {
		return []Finding{r.finding(o, CheckRequireTLS, sev, "spec", policy.NoTLS)}
	}
	var covered []string
	for _, t := range tls.Kids {
		if hosts := t.Get("hosts"); hosts != nil && hosts.Kind == yamlx.SeqNode {
			for _, h := range hosts.Kids {
				covered = append(covered, h.Text())
			}
		}
	}
	var out []Finding
	rules := spec.Get("rules")
	if rules == nil || rules.Kind != yamlx.SeqNode {
		return nil
	}
	for i, rule := range rules.Kids {
		host := rule.Get("host").Text()
		if host == "" || hostCovered(host, covered) {
			continue
		}
		out = append(out, r.finding(o, CheckRequireTLS, sev, fmt.Sprintf("spec.rules[%d].host", i),
			fmt.Sprintf("host %s is not in any spec.tls hosts (policy require_tls)", host)))
	}
	return out
}

func hostCovered(host string, tlsHosts []string) bool {
	for _, h := range tlsHosts {
		if h == host {
			return true
		}
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			if _, tail, found := strings.Cut(host, "."); found && tail == rest {
				return true
			}
		}
	}
	return false
}
