package validate

import (
	"maps"
	"slices"
	"time"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkProjectSettings checks platform.yaml's projects: each name a project
// name, its defaults as the platform's are checked (none allowed: it
// removes the platform's), its security context against its own level.
func checkProjectSettings(p *spec.Platform, doc *load.Document, ps *load.Problems) {
	for _, name := range slices.Sorted(maps.Keys(p.Projects)) {
		s := p.Projects[name]
		at := load.Path{"projects", name}
		if m := load.CheckLabel(name, 63); m != "" {
			ps.Add(doc, at, "project name %q: %s", name, m)
		}
		if s == nil {
			continue
		}
		if s.Defaults == nil {
			// The platform's defaults apply, held to the project's level.
			if p.Defaults != nil {
				checkPodSecurity(doc, p.Defaults.SecurityContext, load.Path{"defaults", "security_context"}, podSecurityProfile(p, name), ps)
			}
			continue
		}
		d := s.Defaults
		if d.Timeout != "" {
			if t, err := time.ParseDuration(d.Timeout); err == nil && t <= 0 {
				ps.Add(doc, at.Child("defaults").Child("timeout"), "must be longer than 0")
			}
		}
		checkResources(d.Resources, doc, at.Child("defaults").Child("resources"), true, ps)
		checkSecurityContext(doc, d.SecurityContext, at.Child("defaults").Child("security_context"), ps)
		if merged := p.DefaultsFor(name); merged != nil {
			checkPodSecurity(doc, merged.SecurityContext, at.Child("defaults").Child("security_context"), podSecurityProfile(p, name), ps)
		}
	}
}
