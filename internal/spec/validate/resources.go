package validate

import (
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkResources checks a resources block; none (removing a default) is
// allowed where a default can apply to it, not in the platform's defaults.
func checkResources(r *spec.Resources, doc *load.Document, at load.Path, noneOK bool, ps *load.Problems) {
	if r == nil {
		return
	}
	lists := map[string]*spec.ResourceList{"requests": r.Requests, "limits": r.Limits}
	for _, which := range []string{"requests", "limits"} {
		l := lists[which]
		if l == nil {
			continue
		}
		for res, q := range map[string]*spec.Quantity{"cpu": l.CPU, "memory": l.Memory} {
			if q == nil {
				continue
			}
			if q.IsNone() {
				if !noneOK {
					ps.Add(doc, at.Child(which).Child(res), "none removes a default, and this is the platform's default: leave it out")
				}
				continue
			}
			if v, err := q.Parse(); err != nil {
				ps.Add(doc, at.Child(which).Child(res), "%q is not a quantity (such as 100m, 0.5 or 128Mi)", q.String())
			} else if v.Sign() < 0 {
				ps.Add(doc, at.Child(which).Child(res), "must not be negative")
			}
		}
	}
	if r.Requests != nil && r.Limits != nil {
		for res, pair := range map[string][2]*spec.Quantity{"cpu": {r.Requests.CPU, r.Limits.CPU}, "memory": {r.Requests.Memory, r.Limits.Memory}} {
			if pair[0] == nil || pair[1] == nil || pair[0].IsNone() || pair[1].IsNone() {
				continue
			}
			req, err1 := pair[0].Parse()
			lim, err2 := pair[1].Parse()
			if err1 == nil && err2 == nil && req.Cmp(lim) > 0 {
				ps.Add(doc, at.Child("requests").Child(res), "request %s is more than the limit %s", pair[0], pair[1])
			}
		}
	}
}
