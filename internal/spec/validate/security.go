package validate

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

var capabilityName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// foldCapability is a capability as Kubernetes names it: upper case,
// without CAP_. The checks compare names folded, so that one word written
// another way (all, cap_net_raw) is one problem, not one per check.
func foldCapability(c string) string {
	u := strings.ToUpper(c)
	return strings.TrimPrefix(u, "CAP_")
}

// checkSecurityContext checks a container's security settings.
func checkSecurityContext(doc *load.Document, s *spec.SecurityContext, at load.Path, ps *load.Problems) {
	if s == nil {
		return
	}
	if s.RunAsNonRoot != nil && *s.RunAsNonRoot && s.RunAsUser != nil && *s.RunAsUser == 0 {
		ps.Add(doc, at.Child("run_as_user"), "user 0 is root, which run_as_non_root: true refuses to start")
	}
	if s.Capabilities != nil {
		for _, list := range []struct {
			field string
			caps  []string
		}{{"add", s.Capabilities.Add}, {"drop", s.Capabilities.Drop}} {
			for i, cp := range list.caps {
				ca := at.Child("capabilities").Child(list.field).Child(i)
				switch folded := foldCapability(cp); {
				case strings.HasPrefix(strings.ToUpper(cp), "CAP_") && capabilityName.MatchString(folded):
					ps.Add(doc, ca, "write %s without CAP_, as Kubernetes names capabilities", folded)
				case cp != folded && capabilityName.MatchString(folded):
					ps.Add(doc, ca, "write %s in upper case, as Kubernetes names capabilities", folded)
				case !capabilityName.MatchString(cp):
					ps.Add(doc, ca, "%q is not a capability name, such as NET_BIND_SERVICE or ALL", cp)
				case slices.Index(list.caps, cp) < i:
					ps.Add(doc, ca, "%s is listed twice", cp)
				}
			}
		}
		for i, cp := range s.Capabilities.Add {
			if slices.Contains(s.Capabilities.Drop, cp) && cp != "ALL" {
				ps.Add(doc, at.Child("capabilities").Child("add").Child(i), "%s is both added and dropped", cp)
			}
		}
	}
}
