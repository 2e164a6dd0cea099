package spec

import (
	"encoding/json"

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

// MergeProjectDefaults makes DefaultsFor's answers once, as the platform
// is loaded (generate asks from many goroutines).
func MergeProjectDefaults(p *Platform) {
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
	m, err := MergePatch(base, over)
	if err != nil {
		return over
	}
	var out Defaults
	if err := json.Unmarshal(m, &out); err != nil {
		return over
	}
	return &out
}

// MergePatch returns the JSON of patch merged into base (a JSON merge
// patch, RFC 7386), each given as a value encoding/json marshals: what
// merges a project's defaults over the platform's, and an environment's
// override over a component (see environments.go).
func MergePatch(base, patch any) ([]byte, error) {
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
