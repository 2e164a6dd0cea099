package webhook

import (
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// A recheck that finds some of a running app's Kustomizations being deleted
// (the root prunes them one after the other, or one component was removed)
// keeps the app's phase: it is not degraded, and GitHub hears no failure.
// Once every Kustomization is being deleted the app is deleted; a component
// that fails otherwise still degrades it.
func TestRecheckDuringPruning(t *testing.T) {
	t.Parallel()
	sync := func(states ...probe.State) probe.Check {
		c := probe.Check{Name: probe.CheckSync, Attempts: 1}
		for i, s := range states {
			c.Components = append(c.Components, probe.ComponentStatus{Component: string(rune('a' + i)), Name: "ks-" + string(rune('a'+i)), State: s})
		}
		c.State = probe.StateProgressing
		return c
	}
	tests := []struct {
		name string
		sync probe.Check
		want store.Phase
	}{
		{"one of two Kustomizations being deleted", sync(probe.StateGone, probe.StatePassed), store.PhaseRunning},
		{"a component failing", sync(probe.StateFailed, probe.StatePassed), store.PhaseDegraded},
		{"every Kustomization being deleted", probe.Check{Name: probe.CheckSync, State: probe.StateGone, Message: "every Flux Kustomization is being deleted"}, store.PhaseDeleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.sync.State == probe.StateProgressing {
				tt.sync.State, tt.sync.Message = probe.StateProgressing, "a: being deleted"
			}
			v := evaluate(evalInput{
				Mode: modeRecheck, Previous: store.PhaseRunning, Now: time.Now(), Timeout: time.Minute,
				Result: probe.Result{Checks: []probe.Check{tt.sync, {Name: probe.CheckReadiness, State: probe.StatePassed, Attempts: 1}}},
			})
			if v.Phase != tt.want {
				t.Errorf("phase %s (%s), want %s", v.Phase, v.Message, tt.want)
			}
		})
	}
}
