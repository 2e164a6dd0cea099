package validate

import (
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkBuildLimits checks platform.yaml's build.limits.
func checkBuildLimits(l *spec.BuildLimits, doc *load.Document, ps *load.Problems) {
	if l == nil {
		return
	}
	for name, q := range map[string]*spec.Quantity{"memory": l.Memory, "cpus": l.CPUs} {
		if q == nil {
			continue
		}
		at := load.Path{"build", "limits", name}
		v, err := q.Parse()
		switch {
		case err != nil:
			// The schema's check reports it.
		case v.Sign() <= 0:
			ps.Add(doc, at, "must be more than 0")
		case name == "memory" && v.Value() < 16<<20:
			ps.Add(doc, at, "must be at least 16Mi")
		}
	}
}
