package spec

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// Per-project settings: platform.yaml projects.<name> grants one project a
// pod security level and defaults of its own. Everything that reads the
// platform's asks through PodSecurityFor and DefaultsFor, with the
// project: validation, generate (the Namespace's labels, the containers'
// resources and security context, the deploy timeout), verify and review.

// PodSecurityFor is the Pod Security Standard the project's namespace
// enforces: the project's pod_security, else policy.pod_security ("" for
// none).
func (p *Platform) PodSecurityFor(project string) string {
	level, _ := p.PodSecuritySource(project)
	return level
}

// PodSecuritySource is PodSecurityFor with the platform.yaml field that
// sets it (projects.<name>.pod_security or policy.pod_security), for
// messages.
func (p *Platform) PodSecuritySource(project string) (level, field string) {
	if s := p.Projects[project]; s != nil && s.PodSecurity != "" {
		return s.PodSecurity, "projects." + project + ".pod_security"
	}
	if p.Policy != nil {
		return p.Policy.PodSecurity, "policy.pod_security"
	}
	return "", ""
}

// DefaultsFor is the defaults of the project's apps: the platform's, with
// the project's over them field by field (a JSON merge patch, RFC 7386),
// so that a project sets its own memory limit and keeps the platform's CPU
// one. nil when neither sets any.
func (p *Platform) DefaultsFor(project string) *Defaults {
	s := p.Projects[project]
	if s == nil || s.Defaults == nil {
		return p.Defaults
	}
	if s.merged != nil {
		return s.merged
	}
	return mergeDefaults(p.Defaults, s.Defaults)
}

// mergeProjectDefaults makes DefaultsFor's answers once, as the platform
// is loaded (generate asks from many goroutines).
func mergeProjectDefaults(p *Platform) {
	for _, s := range p.Projects {
		if s != nil && s.Defaults != nil {
			s.merged = mergeDefaults(p.Defaults, s.Defaults)
		}
	}
}

// mergeDefaults returns over merged into base (RFC 7386).
func mergeDefaults(base, over *Defaults) *Defaults {
	if base == nil {
		return over
	}
	m, err := mergePatch(base, over)
	if err != nil {
		return over
	}
	var out Defaults
	if err := json.Unmarshal(m, &out); err != nil {
		return over
	}
	return &out
}

// mergePatch returns the JSON of patch merged into base (a JSON merge
// patch, RFC 7386), each given as a value encoding/json marshals: what
// merges a project's defaults over the platform's, and an environment's
// override over a component (see environments.go).
func mergePatch(base, patch any) ([]byte, error) {
	b, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	o, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	return jsonpatch.MergePatch(b, o)
}

// checkProjectSettings checks platform.yaml's projects: each name a project
// name, its defaults as the platform's are checked (none allowed: it
// removes the platform's), its security context against its own level.
func checkProjectSettings(p *Platform, doc *Document, ps *Problems) {
	for _, name := range slices.Sorted(maps.Keys(p.Projects)) {
		s := p.Projects[name]
		at := Path{"projects", name}
		if m := checkLabel(name, 63); m != "" {
			ps.Add(doc, at, "project name %q: %s", name, m)
		}
		if s == nil {
			continue
		}
		if s.Defaults == nil {
			// The platform's defaults apply, held to the project's level.
			if p.Defaults != nil {
				checkPodSecurity(doc, p.Defaults.SecurityContext, Path{"defaults", "security_context"}, podSecurityProfile(p, name), ps)
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
