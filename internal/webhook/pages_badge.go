package webhook

import (
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// badgeView is a phase as a page shows it. The pages say no more than the
// checks found: the stored phase stays what the API and GitHub see.
type badgeView struct {
	// Class picks the badge's colour (phase-<class>).
	Class string
	Label string
	// Title explains a label that is not the stored phase.
	Title string
}

// Badge labels that are not phases.
const (
	badgeUnchecked  = "unchecked"
	badgeSuperseded = "superseded"
)

// phaseBadge is the badge of a deployment in phase ph with the checks res;
// current says whether it is its app's current deployment.
//   - A deployment that a newer one replaced while it was not failed or
//     deleted is "superseded": it is not running any more, whatever its
//     phase was when the next revision came.
//   - A running deployment whose readiness and reachability checks were
//     both skipped (no cluster to look at) is "synced; not checked": Flux
//     applied it, and nothing saw it run.
func phaseBadge(ph store.Phase, res probe.Result, current bool) badgeView {
	if !current && ph != store.PhaseFailed && ph != store.PhaseDeleted {
		return badgeView{Class: badgeSuperseded, Label: badgeSuperseded, Title: "a newer deployment replaced this one (it was " + string(ph) + ")"}
	}
	if ph == store.PhaseRunning && notChecked(res) {
		return badgeView{Class: badgeUnchecked, Label: "synced; not checked",
			Title: "Flux applied the revision; readiness and reachability were not checked (" + res.Check(probe.CheckReadiness).Message + ")"}
	}
	return badgeView{Class: string(ph), Label: string(ph)}
}

// notChecked reports whether the readiness and reachability checks were
// both skipped.
func notChecked(res probe.Result) bool {
	return res.Check(probe.CheckReadiness).State == probe.StateSkipped &&
		res.Check(probe.CheckReachability).State == probe.StateSkipped
}
