package load

import "github.com/fleetwright/fleetwright/internal/spec"

// ExportRefAt is an export_ref of a spec and the path of the env entry
// that holds it.
type ExportRefAt struct {
	R  *spec.ExportRef
	At Path
}

// ExportRefs returns the export_refs of a workload's containers, with
// their paths: those it inherits from the app's env, then its own;
// component i is the workload's.
func ExportRefs(s *spec.App, w *spec.WorkloadSpec, i int) []ExportRefAt {
	own := containerExportRefs(w, i)
	if len(s.Env) == 0 {
		return own
	}
	return append(appExportRefs(s, w), own...)
}

// containerExportRefs returns the export_refs of a workload's containers'
// own env, with their paths.
func containerExportRefs(w *spec.WorkloadSpec, i int) []ExportRefAt {
	var out []ExportRefAt
	for j := range w.Env {
		if r := w.Env[j].ExportRef; r != nil {
			out = append(out, ExportRefAt{r, Path{"components", i, "workload_spec", "env", j, "export_ref"}})
		}
	}
	for _, kind := range [2]string{"init_containers", "sidecars"} {
		list := w.InitContainers
		if kind == "sidecars" {
			list = w.Sidecars
		}
		for k := range list {
			for j := range list[k].Env {
				if r := list[k].Env[j].ExportRef; r != nil {
					out = append(out, ExportRefAt{r, Path{"components", i, "workload_spec", kind, k, "env", j, "export_ref"}})
				}
			}
		}
	}
	return out
}

// appExportRefs returns the export_refs a workload inherits from the
// app's env, with their paths.
func appExportRefs(s *spec.App, w *spec.WorkloadSpec) []ExportRefAt {
	var out []ExportRefAt
	for _, j := range s.InheritedEnv(w) {
		if r := s.Env[j].ExportRef; r != nil {
			out = append(out, ExportRefAt{r, Path{"env", j, "export_ref"}})
		}
	}
	return out
}
