package policy_test

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/policy"
)

func TestChecks(t *testing.T) {
	t.Parallel()
	web := policy.Container{Name: "web", Role: policy.RoleContainer}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"no requests", policy.MissingRequests(web), `container "web" sets no cpu or memory request (policy require_requests)`},
		{"memory only", policy.MissingRequests(policy.Container{Name: "proxy", Role: policy.RoleSidecar, Requests: []string{"memory"}}),
			`sidecar "proxy" sets no cpu request (policy require_requests)`},
		{"both requests", policy.MissingRequests(policy.Container{Name: "web", Requests: []string{"cpu", "memory"}}), ""},
		{"no probes", policy.MissingProbes(web, true), `container "web" has no readinessProbe or livenessProbe (policy require_probes)`},
		{"readiness only", policy.MissingProbes(policy.Container{Name: "web", Role: policy.RoleContainer, Readiness: true}, true),
			`container "web" has no livenessProbe (policy require_probes)`},
		{"a job's pod", policy.MissingProbes(web, false), ""},
		{"an init container", policy.MissingProbes(policy.Container{Name: "wait", Role: policy.RoleInit}, true), ""},
		{"one replica", policy.FewReplicas(1, "prod-eu", false, false),
			"runs 1 replica(s) on production cluster prod-eu and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)"},
		{"autoscaled", policy.FewReplicas(1, "prod-eu", true, false), ""},
		{"paused", policy.FewReplicas(0, "prod-eu", false, true), ""},
		{"two replicas", policy.FewReplicas(2, "prod-eu", false, false), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
