package validate

import (
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkAppEnv checks the app-level env and env_from: each entry as a
// container's, and no export_ref that a component would inherit from
// itself.
func (l *checker) checkAppEnv(a *load.LoadedApp, plat *spec.Platform, ps *load.Problems) {
	s, doc := &a.Spec, a.Doc
	if len(s.EnvFrom) > 0 {
		checkEnvFrom(doc, s.EnvFrom, load.Path{"env_from"}, ps)
	}
	if len(s.Env) == 0 {
		return
	}
	l.checkEnvList(a, &spec.Component{}, s.Env, load.Path{"env"}, plat, ps)
	checkEnvRefs(doc, s.Env, nil, nil, ps)
	for j, e := range s.Env {
		r := e.ExportRef
		if r == nil || r.Component == "" || r.AddonInstanceID != "" || (r.App != "" && r.App != s.Name) {
			continue
		}
		t := a.Component(r.Component)
		if t == nil || t.WorkloadSpec == nil || spec.SetsEnv(t.WorkloadSpec.Env, e.Name) {
			continue
		}
		ps.Add(doc, load.Path{"env", j, "export_ref", "component"}, "component %s gets the app's env too, and a component cannot use its own exports; give %s an env entry %s of its own, or set %s on the components that need it", t.Name, t.Name, e.Name, e.Name)
	}
}
