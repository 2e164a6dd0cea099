package validate

import (
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

func init() { fieldChecks = append(fieldChecks, checkEverydayFields) }

// The everyday fields of a workload that used to take a patch: its
// Deployment's strategy and revision history, node ports, and its Service's
// annotations and IP family policy (secret_ref.optional needs no check).
func checkEverydayFields(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	if c.Type != spec.TypeWorkload {
		return
	}
	if s := w.Strategy; s != nil {
		sa := at.Child("strategy")
		statefulSet := false
		for _, v := range w.Volumes {
			statefulSet = statefulSet || v.Size != nil
		}
		switch {
		case statefulSet:
			ps.AddKey(doc, sa, "a workload with a volume of its own (size) is a StatefulSet, which replaces one pod at a time and takes no strategy")
		case s.Type == "Recreate" && (s.MaxSurge != nil || s.MaxUnavailable != nil):
			ps.Add(doc, sa.Child("type"), "Recreate stops every pod before starting new ones: max_surge and max_unavailable are for RollingUpdate")
		default:
			checkIntOrPercent(doc, sa.Child("max_surge"), s.MaxSurge, false, ps)
			checkIntOrPercent(doc, sa.Child("max_unavailable"), s.MaxUnavailable, true, ps)
			if isZero(s.MaxSurge) && isZero(s.MaxUnavailable) {
				ps.Add(doc, sa.Child("max_unavailable"), "max_surge and max_unavailable cannot both be 0: the rollout could never replace a pod")
			}
		}
	}
	svcType := serviceType(w.Service)
	nodePorts := map[int]load.Path{}
	for i, p := range w.Ports {
		if p.NodePort == 0 {
			continue
		}
		pa := at.Child("ports").Child(i).Child("node_port")
		switch {
		case p.Expose != nil && !*p.Expose:
			ps.Add(doc, pa, "the port is not on the Service (expose: false), so no node opens it")
		case svcType != spec.ServiceNodePort && svcType != spec.ServiceLoadBalancer:
			ps.Add(doc, pa, "a node port needs service.type NodePort or LoadBalancer (the Service is %s)", svcType)
		}
		if prev, dup := nodePorts[p.NodePort]; dup {
			ps.Add(doc, pa, "node port %d is %s's too", p.NodePort, prev)
		}
		nodePorts[p.NodePort] = pa
		if p.NodePort < 30000 || p.NodePort > 32767 {
			ps.Warn(doc, pa, "%d is outside Kubernetes' default node port range (30000-32767): the API server refuses it unless its --service-node-port-range allows it", p.NodePort)
		}
	}
	if s := w.Service; s != nil {
		for _, k := range sortedKeys(s.Annotations) {
			ka := at.Child("service").Child("annotations").Child(k)
			switch {
			case layout.ReservedLabel(k):
				ps.WarnKey(doc, ka, "%s is in fleetwright's own prefix, whose annotations it sets itself; choose another key", k)
			case labelKeyProblem(k) != "":
				ps.AddKey(doc, ka, "%s", labelKeyProblem(k))
			}
		}
	}
}

// serviceType is the type of a workload's Service: ClusterIP unless s says.
func serviceType(s *spec.Service) string {
	if s == nil || s.Type == "" {
		return "ClusterIP"
	}
	return s.Type
}

// checkIntOrPercent checks a count (0 or more) or a percentage (0% or
// more; at most 100% when capped).
func checkIntOrPercent(doc *load.Document, at load.Path, v *spec.IntOrPercent, capped bool, ps *load.Problems) {
	if v == nil {
		return
	}
	s := v.String()
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		if n, err := strconv.Atoi(pct); err != nil || n < 0 || capped && n > 100 {
			if capped {
				ps.Add(doc, at, "%q is not a percentage from 0%% to 100%%", s)
			} else {
				ps.Add(doc, at, "%q is not a percentage of 0%% or more", s)
			}
		}
	} else if n, ok := v.Int(); !ok || n < 0 {
		ps.Add(doc, at, "%q is neither a count nor a percentage such as 25%%", s)
	}
}

// isZero reports whether v is set to 0 or 0%.
func isZero(v *spec.IntOrPercent) bool {
	return v != nil && (v.String() == "0" || v.String() == "0%")
}
