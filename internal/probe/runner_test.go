package probe

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// scripted answers each check from a list of states, repeating the last.
type scripted struct {
	mu     sync.Mutex
	states map[string][]State
	calls  map[string]int
	paused bool
}

func (s *scripted) next(name string) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	l := s.states[name]
	i := min(s.calls[name], len(l)-1)
	s.calls[name]++
	return l[i]
}

func (s *scripted) Sync(context.Context, Target) (Check, time.Duration) {
	return Check{Name: CheckSync, State: s.next(CheckSync)}, 0
}

func (s *scripted) Readiness(context.Context, Target) (Check, bool) {
	st := s.next(CheckReadiness)
	return Check{Name: CheckReadiness, State: st}, s.paused && st == StatePassed
}

func (s *scripted) Reachability(context.Context, Target) (Check, string) {
	st := s.next(CheckReachability)
	live := ""
	if st == StatePassed {
		live = "https://x.example.test/"
	}
	return Check{Name: CheckReachability, State: st}, live
}

func states(r Result) []string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, c.Name+"="+string(c.State)+"/"+string(rune('0'+c.Attempts)))
	}
	return out
}

func TestRunnerRun(t *testing.T) {
	t.Parallel()
	P, G, F, S := StatePassed, StateProgressing, StateFailed, StateSkipped
	tests := []struct {
		name     string
		script   map[string][]State
		paused   bool
		timeout  time.Duration
		want     []string
		timedOut bool
		live     string
	}{
		{"all green", map[string][]State{"sync": {P}, "readiness": {P}, "reachability": {P}}, false, time.Minute,
			[]string{"sync=passed/1", "readiness=passed/1", "reachability=passed/1"}, false, "https://x.example.test/"},
		{"retries until green", map[string][]State{"sync": {G, G, P}, "readiness": {G, P}, "reachability": {S}}, false, time.Minute,
			[]string{"sync=passed/3", "readiness=passed/2", "reachability=skipped/1"}, false, ""},
		{"stops at a failure", map[string][]State{"sync": {P}, "readiness": {G, F}, "reachability": {P}}, false, time.Minute,
			[]string{"sync=passed/1", "readiness=failed/2", "reachability=pending/0"}, false, ""},
		{"times out", map[string][]State{"sync": {P}, "readiness": {G}, "reachability": {P}}, false, 30 * time.Millisecond,
			nil, true, ""},
		{"paused skips reachability", map[string][]State{"sync": {P}, "readiness": {P}, "reachability": {P}}, true, time.Minute,
			[]string{"sync=passed/1", "readiness=passed/1", "reachability=skipped/0"}, false, ""},
		{"stops when the app is gone", map[string][]State{"sync": {G, StateGone}, "readiness": {P}, "reachability": {P}}, false, time.Minute,
			[]string{"sync=gone/2", "readiness=pending/0", "reachability=pending/0"}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := NewRunner(RunnerOptions{Backoff: Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}})
			var reports atomic.Int32
			c := &scripted{states: tc.script, paused: tc.paused}
			res, err := r.Run(t.Context(), c, Target{App: layout.AppRef{Project: "p", Name: "a"}}, time.Now(), tc.timeout, nil, func(Result) { reports.Add(1) })
			if err != nil {
				t.Fatal(err)
			}
			if res.TimedOut != tc.timedOut || res.LiveURL != tc.live || res.Paused != tc.paused {
				t.Errorf("result = %+v", res)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, states(res)); diff != "" {
					t.Errorf("checks (-want +got):\n%s", diff)
				}
			} else if res.Checks[1].State != StateProgressing || res.Checks[1].Attempts < 2 {
				t.Errorf("timed-out checks = %v", states(res))
			}
			if reports.Load() == 0 {
				t.Error("no report")
			}
		})
	}
}

func TestRunnerWakeCutsBackoff(t *testing.T) {
	t.Parallel()
	r := NewRunner(RunnerOptions{Backoff: Backoff{Initial: time.Hour, Max: time.Hour}})
	c := &scripted{states: map[string][]State{"sync": {StateProgressing, StatePassed}, "readiness": {StatePassed}, "reachability": {StatePassed}}}
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	done := make(chan Result, 1)
	go func() {
		res, _ := r.Run(context.Background(), c, Target{}, time.Now(), 2*time.Hour, wake, func(Result) {})
		done <- res
	}()
	select {
	case res := <-done:
		if !res.AllGreen() {
			t.Errorf("result = %v", states(res))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a wake did not cut the hour-long backoff short")
	}
}

func TestRunnerCancel(t *testing.T) {
	t.Parallel()
	r := NewRunner(RunnerOptions{Backoff: Backoff{Initial: time.Hour, Max: time.Hour}})
	c := &scripted{states: map[string][]State{"sync": {StateProgressing}}}
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	_, err := r.Run(ctx, c, Target{}, time.Now(), 2*time.Hour, nil, func(Result) {})
	if err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// gate counts the checks running at once.
type gate struct {
	cur, peak atomic.Int32
}

func (g *gate) enter() {
	n := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond)
	g.cur.Add(-1)
}

func (g *gate) Sync(context.Context, Target) (Check, time.Duration) {
	g.enter()
	return Check{Name: CheckSync, State: StatePassed}, 0
}

func (g *gate) Readiness(context.Context, Target) (Check, bool) {
	g.enter()
	return Check{Name: CheckReadiness, State: StatePassed}, false
}

func (g *gate) Reachability(context.Context, Target) (Check, string) {
	g.enter()
	return Check{Name: CheckReachability, State: StatePassed}, ""
}

func TestRunnerBoundsConcurrency(t *testing.T) {
	t.Parallel()
	g := &gate{}
	r := NewRunner(RunnerOptions{Concurrency: 2})
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			var err error
			if i%3 == 0 {
				_, err = r.SyncOnce(t.Context(), g, Target{})
			} else {
				_, err = r.Once(t.Context(), g, Target{})
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := g.peak.Load(); p > 2 || p < 1 {
		t.Errorf("peak concurrency = %d, want 1..2", p)
	}
}
