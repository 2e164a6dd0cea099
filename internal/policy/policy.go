// Package policy decides the checks of platform.yaml's policy block that
// both ends of the pipeline run: validate on the specs, at their lines, and
// verify on the fleet's objects, at theirs. What each check asks of a
// container or a workload, and how it says what is missing, is written
// here once; the callers only describe what they read and where it is.
package policy

import (
	"slices"
	"strconv"
)

// Container is what the checks read of one container of a pod.
type Container struct {
	// Name of the container.
	Name string
	// Role is "container", "sidecar" or "init container".
	Role string
	// Requests names the resources the container requests (cpu, memory),
	// after the platform's defaults.
	Requests []string
	// Readiness and Liveness report its probes.
	Readiness, Liveness bool
}

// Roles of a container.
const (
	RoleContainer = "container"
	RoleSidecar   = "sidecar"
	RoleInit      = "init container"
)

// MissingRequests is require_requests: the message for a container that
// requests no cpu or no memory, or "".
func MissingRequests(c Container) string {
	lacking := either(!slices.Contains(c.Requests, "cpu"), !slices.Contains(c.Requests, "memory"), "cpu", "memory", "cpu or memory")
	if lacking == "" {
		return ""
	}
	return c.Role + " " + strconv.Quote(c.Name) + " sets no " + lacking + " request (policy require_requests)"
}

// MissingProbes is require_probes: the message for a container that runs
// as long as its pod (not an init container, nor any container of a job's
// pod: longRunning false) and lacks a readiness or liveness probe, or "".
func MissingProbes(c Container, longRunning bool) string {
	if !longRunning || c.Role == RoleInit {
		return ""
	}
	lacking := either(!c.Readiness, !c.Liveness, "readinessProbe", "livenessProbe", "readinessProbe or livenessProbe")
	if lacking == "" {
		return ""
	}
	return c.Role + " " + strconv.Quote(c.Name) + " has no " + lacking + " (policy require_probes)"
}

// either names what is lacking of two things: a, b, both ("a or b"), or ""
// (the checks run on every container: no list is built for it).
func either(lackA, lackB bool, a, b, both string) string {
	switch {
	case lackA && lackB:
		return both
	case lackA:
		return a
	case lackB:
		return b
	}
	return ""
}

// FewReplicas is production_replicas: the message for a workload of a
// production cluster that runs fewer than two replicas with nothing to
// scale it (a paused workload runs none on purpose), or "".
func FewReplicas(replicas int64, cluster string, autoscaled, paused bool) string {
	if replicas >= 2 || autoscaled || paused {
		return ""
	}
	return "runs " + strconv.FormatInt(replicas, 10) + " replica(s) on production cluster " + cluster +
		" and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)"
}

// NoTLS is require_tls for an Ingress that serves no host over TLS.
const NoTLS = "Ingress has no TLS (policy require_tls)"
