package validate

import (
	"net/netip"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// internalSuffixes end names that resolve only inside a cluster, a cloud's
// network or the machine itself.
var internalSuffixes = []string{".svc", ".svc.cluster.local", ".cluster.local", ".local", ".internal", ".localhost", ".localdomain"}

// PublicHostProblem says why a host cannot be a public ingress host, or "":
// an IP address (169.254.169.254, ::1), a cluster-internal or private name
// (*.svc, *.cluster.local, kubernetes.default…, metadata.google.internal,
// *.internal, *.local, localhost and localhost.*), or a single label
// (admin). It does not check the name's syntax. render validate and verify
// both apply it.
func PublicHostProblem(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	name := strings.TrimPrefix(h, "*.")
	if _, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		return "is an IP address; an ingress host must be a public DNS name (such as app.example.com)"
	}
	first, _, _ := strings.Cut(name, ".")
	internal := first == "localhost" || name == "kubernetes.default" || strings.HasPrefix(name, "kubernetes.default.")
	for _, s := range internalSuffixes {
		if strings.HasSuffix("."+name, s) {
			internal = true
		}
	}
	switch {
	case internal:
		return "is a cluster-internal or private name; an ingress host must be a public DNS name (such as app.example.com)"
	case !strings.Contains(name, ".") && load.Dns1123Label.MatchString(name):
		return "is a single label; an ingress host must be a fully qualified DNS name (such as " + name + ".example.com)"
	}
	return ""
}

// ingressHostProblem says why a host written in a spec is not a valid
// ingress host, or "".
func ingressHostProblem(host string) string {
	if m := PublicHostProblem(host); m != "" {
		return m
	}
	if !load.WildcardHost.MatchString(host) {
		return "is not a valid host name"
	}
	return ""
}
