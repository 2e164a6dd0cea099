package webhook

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// runMode says why the checks of a deployment ran.
type runMode int

const (
	// modeRollout: the deployment is rolling out; checks run until green,
	// failed or timed out.
	modeRollout runMode = iota
	// modeRecheck: the deployment rolled out; one pass of every check.
	modeRecheck
	// modeFinal: the deployment failed; one sync check, which only Flux's
	// own verdict on the revision (after the webhook's timeout) or the app's
	// deletion acts on.
	modeFinal
)

// verdict is a phase and the reason for it.
type verdict struct {
	Phase   store.Phase
	Message string
}

// evalInput is everything a phase decision looks at.
type evalInput struct {
	Mode     runMode
	Previous store.Phase
	Result   probe.Result
	// Done: the rollout run ended (no more attempts will follow).
	Done bool
	// Timeout is the app's timeout in force.
	Timeout time.Duration
	// DegradedSince is when the deployment became degraded (zero if not).
	DegradedSince time.Time
	Now           time.Time
}

// evaluate decides the phase of a deployment. docs/webhook.md states the same
// rules in prose; keep them in step.
func evaluate(in evalInput) verdict {
	res := in.Result
	if s := res.Check(probe.CheckSync); s.State == probe.StateGone {
		return verdict{store.PhaseDeleted, "Flux pruned the app: " + s.Message}
	}
	if in.Mode == modeRecheck {
		if res.AllGreen() {
			return greenVerdict(res)
		}
		if s := res.Check(probe.CheckSync); s.MovedOn() {
			// A later fleet revision is rolling the app out: its deployment
			// takes over once its first event comes, and until then this
			// one is not what the checks see.
			return verdict{in.Previous, "a later fleet revision changed the app: " + s.Message}
		}
		if s := res.Check(probe.CheckSync); slices.ContainsFunc(s.Components, func(c probe.ComponentStatus) bool { return c.State == probe.StateGone }) {
			// Flux is pruning some of the app's Kustomizations (a removed
			// component, or the whole app, deleted one object after the
			// other): not a degradation; the app is green again, or gone,
			// once it is done.
			return verdict{in.Previous, "Flux is deleting part of the app: " + s.Message}
		}
		msg := notGreenMessage(res)
		if in.Previous == store.PhaseDegraded && !in.DegradedSince.IsZero() && in.Timeout > 0 &&
			in.Now.Sub(in.DegradedSince) >= in.Timeout {
			return verdict{store.PhaseFailed, fmt.Sprintf("degraded for longer than the timeout (%s): %s", in.Timeout, msg)}
		}
		return verdict{store.PhaseDegraded, msg}
	}
	if c, ok := res.Failed(); ok {
		return verdict{store.PhaseFailed, c.Name + " check failed: " + c.Message}
	}
	if res.AllGreen() {
		return greenVerdict(res)
	}
	if res.TimedOut {
		return verdict{store.PhaseFailed, fmt.Sprintf("timeout (%s) passed before every check was green: %s", in.Timeout, notGreenMessage(res))}
	}
	attempted := slices.ContainsFunc(res.Checks, func(c probe.Check) bool { return c.Attempts > 0 })
	if !attempted {
		return verdict{store.PhasePending, "waiting for the first check"}
	}
	return verdict{store.PhaseDeploying, notGreenMessage(res)}
}

func greenVerdict(res probe.Result) verdict {
	if res.Paused {
		return verdict{store.PhasePaused, "every workload is scaled to 0 replicas by its spec"}
	}
	var parts []string
	for _, c := range res.Checks {
		parts = append(parts, c.Name+" "+string(c.State))
	}
	msg := strings.Join(parts, ", ")
	if w := tlsWarnings(res); w != "" {
		msg += "; " + w
	}
	return verdict{store.PhaseRunning, msg}
}

func tlsWarnings(res probe.Result) string {
	var w []string
	for _, e := range res.Check(probe.CheckReachability).Endpoints {
		if e.TLS != nil && e.TLS.Warning != "" {
			w = append(w, e.Host+": "+e.TLS.Warning)
		}
	}
	return strings.Join(w, "; ")
}

func notGreenMessage(res probe.Result) string {
	c, ok := res.Blocking()
	if !ok {
		return ""
	}
	if c.Message == "" {
		return c.Name + " " + string(c.State)
	}
	return c.Name + ": " + c.Message
}
