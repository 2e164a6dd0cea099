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
		if !SetsEnv(w.Env, e.Name) {
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

// InheritedEnv returns the indexes in the app's env of the entries a
// workload inherits (those it does not set itself).
func (s *App) InheritedEnv(w *WorkloadSpec) []int {
	var out []int
	for j, e := range s.Env {
		if !SetsEnv(w.Env, e.Name) {
			out = append(out, j)
		}
	}
	return out
}

// SetsEnv reports whether env has an entry named name.
func SetsEnv(env []EnvVar, name string) bool {
	for i := range env {
		if env[i].Name == name {
			return true
		}
	}
	return false
}
