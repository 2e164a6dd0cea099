package spec

import "slices"

// WorkloadEnv is the env of a workload's, job's or cronjob's container: the
// app's entries first, except those the component sets itself, then the
// component's own. Without app-level env it is the component's list.
func (s *App) WorkloadEnv(w *WorkloadSpec) []EnvVar {
	if len(s.Env) == 0 {
		return w.Env
	}
	out := make([]EnvVar, 0, len(s.Env)+len(w.Env))
	for _, e := range s.Env {
		if !setsEnv(w.Env, e.Name) {
			out = append(out, e)
		}
	}
	return append(out, w.Env...)
}

// WorkloadEnvFrom is the env_from of a workload's container: the app's
// entries, then the component's (a later source wins a key both have).
func (s *App) WorkloadEnvFrom(w *WorkloadSpec) []EnvFrom {
	if len(s.EnvFrom) == 0 {
		return w.EnvFrom
	}
	return append(slices.Clip(s.EnvFrom), w.EnvFrom...)
}

// inheritedEnv returns the indexes in the app's env of the entries a
// workload inherits (those it does not set itself).
func (s *App) inheritedEnv(w *WorkloadSpec) []int {
	var out []int
	for j, e := range s.Env {
		if !setsEnv(w.Env, e.Name) {
			out = append(out, j)
		}
	}
	return out
}

func setsEnv(env []EnvVar, name string) bool {
	for i := range env {
		if env[i].Name == name {
			return true
		}
	}
	return false
}

// checkAppEnv checks the app-level env and env_from: each entry as a
// container's, and no export_ref that a component would inherit from
// itself.
func (l *checker) checkAppEnv(a *LoadedApp, plat *Platform, ps *Problems) {
	s, doc := &a.Spec, a.Doc
	if len(s.EnvFrom) > 0 {
		checkEnvFrom(doc, s.EnvFrom, Path{"env_from"}, ps)
	}
	if len(s.Env) == 0 {
		return
	}
	l.checkEnvList(a, &Component{}, s.Env, Path{"env"}, plat, ps)
	checkEnvRefs(doc, s.Env, nil, nil, ps)
	for j, e := range s.Env {
		r := e.ExportRef
		if r == nil || r.Component == "" || r.AddonInstanceID != "" || (r.App != "" && r.App != s.Name) {
			continue
		}
		t := a.Component(r.Component)
		if t == nil || t.WorkloadSpec == nil || setsEnv(t.WorkloadSpec.Env, e.Name) {
			continue
		}
		ps.Add(doc, Path{"env", j, "export_ref", "component"}, "component %s gets the app's env too, and a component cannot use its own exports; give %s an env entry %s of its own, or set %s on the components that need it", t.Name, t.Name, e.Name, e.Name)
	}
}
