package validate

import (
	"slices"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Pod Security: platform.yaml's policy.pod_security labels the project
// namespaces, and the API server then refuses pods that break the profile.
// Validation says so at the field that breaks it: a container's own
// security_context, or platform.yaml's defaults.security_context, which
// every container takes. What neither sets is generate's to fill.

// baselineCapabilities are the capabilities the baseline profile lets a
// container add.
var baselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// profile is an enforced Pod Security profile and the setting it comes
// from.
type profile struct {
	level string // baseline or restricted; "" for none that refuses anything
	where string // the platform.yaml field that sets it
}

// podSecurityProfile is the profile a project's namespace enforces: the
// project's pod_security, else the platform's policy.pod_security.
func podSecurityProfile(plat *spec.Platform, project string) profile {
	if plat == nil {
		return profile{}
	}
	if l, where := plat.PodSecuritySource(project); l == "baseline" || l == "restricted" {
		return profile{l, where}
	}
	return profile{}
}

// checkPodSecurity checks the fields a security context sets against a
// profile; at is the security context's path.
func checkPodSecurity(doc *load.Document, s *spec.SecurityContext, at load.Path, prof profile, ps *load.Problems) {
	profile := prof.level
	if s == nil || profile == "" {
		return
	}
	refuse := func(p load.Path, what string) {
		ps.Add(doc, p, "%s is %s, which refuses %s; the namespace would reject the pods", prof.where, profile, what)
	}
	if s.SeccompProfile == "Unconfined" {
		refuse(at.Child("seccomp_profile"), "seccomp_profile Unconfined")
	}
	if s.Capabilities != nil {
		for i, c := range s.Capabilities.Add {
			if c = foldCapability(c); !capabilityName.MatchString(c) {
				continue // not a capability: checkSecurityContext says so
			}
			if profile == "restricted" && c != "NET_BIND_SERVICE" || !slices.Contains(baselineCapabilities, c) {
				refuse(at.Child("capabilities").Child("add").Child(i), "adding the capability "+c)
			}
		}
	}
	if profile != "restricted" {
		return
	}
	if s.AllowPrivilegeEscalation != nil && *s.AllowPrivilegeEscalation {
		refuse(at.Child("allow_privilege_escalation"), "allow_privilege_escalation: true")
	}
	if s.RunAsNonRoot != nil && !*s.RunAsNonRoot {
		refuse(at.Child("run_as_non_root"), "run_as_non_root: false")
	}
	if s.RunAsUser != nil && *s.RunAsUser == 0 {
		refuse(at.Child("run_as_user"), "running as user 0 (root)")
	}
	if s.Capabilities != nil && len(s.Capabilities.Drop) > 0 && !slices.ContainsFunc(s.Capabilities.Drop, func(c string) bool { return foldCapability(c) == "ALL" }) {
		refuse(at.Child("capabilities").Child("drop"), "a container that keeps capabilities (drop must list ALL)")
	}
}
