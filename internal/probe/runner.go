package probe

import (
	"context"
	"time"
)

// Backoff is the wait between attempts of a check that is not green yet: it
// starts at Initial and doubles up to Max.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultBackoff waits 1s, 2s, 4s, … up to 30s.
func DefaultBackoff() Backoff { return Backoff{Initial: time.Second, Max: 30 * time.Second} }

// RunnerOptions configures NewRunner.
type RunnerOptions struct {
	// Concurrency bounds the checks running at once across all deployments; default 4.
	Concurrency int
	// Backoff between attempts; default DefaultBackoff.
	Backoff Backoff
	// Clock; default the wall clock.
	Clock Clock
	// Observe, if set, is called after every attempt of a check.
	Observe func(check string, state State, took time.Duration)
}

// Runner runs the checks of deployments in order with backoff and bounded
// concurrency. It is safe for concurrent use.
type Runner struct {
	clock   Clock
	backoff Backoff
	sem     chan struct{}
	observe func(string, State, time.Duration)
}

// NewRunner returns a Runner.
func NewRunner(o RunnerOptions) *Runner {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Backoff.Initial <= 0 {
		o.Backoff.Initial = DefaultBackoff().Initial
	}
	if o.Backoff.Max < o.Backoff.Initial {
		o.Backoff.Max = max(o.Backoff.Initial, DefaultBackoff().Max)
	}
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.Observe == nil {
		o.Observe = func(string, State, time.Duration) {}
	}
	return &Runner{clock: o.Clock, backoff: o.Backoff, sem: make(chan struct{}, o.Concurrency), observe: o.Observe}
}

// Run runs c's checks of t in order, each until it is green, starting from
// the first. It stops when every check is green, a check fails or finds its
// objects gone, the deadline (started plus the app's timeout, or
// defaultTimeout while that is unknown) passes, or ctx ends. A receive on wake cuts a backoff wait short. report
// gets the result after every attempt. The returned error is ctx's, if it
// ended the run.
func (r *Runner) Run(ctx context.Context, c Checker, t Target, started time.Time, defaultTimeout time.Duration, wake <-chan struct{}, report func(Result)) (Result, error) {
	res := NewResult()
	wait := r.backoff.Initial
	for i := 0; i < len(res.Checks); {
		if err := r.attempt(ctx, c, t, i, &res); err != nil {
			return res, err
		}
		last := res.Checks[i]
		if res.Paused && i == 1 {
			res.Checks[2] = Check{Name: CheckReachability, State: StateSkipped, Message: "paused: no replicas to answer"}
			report(res)
			return res, nil
		}
		report(res)
		switch {
		case last.State.Green():
			i++
			wait = r.backoff.Initial
			continue
		case last.State == StateFailed || last.State == StateGone:
			return res, nil
		}
		timeout := defaultTimeout
		if res.Timeout > 0 {
			timeout = res.Timeout
		}
		left := started.Add(timeout).Sub(r.clock.Now())
		if left <= 0 {
			res.TimedOut = true
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-wake:
		case <-r.clock.After(min(wait, left)):
		}
		wait = min(2*wait, r.backoff.Max)
	}
	return res, nil
}

// Once runs every check one time, in order, whatever the earlier ones found.
func (r *Runner) Once(ctx context.Context, c Checker, t Target) (Result, error) {
	res := NewResult()
	for i := range res.Checks {
		if i == 2 && res.Paused {
			res.Checks[2] = Check{Name: CheckReachability, State: StateSkipped, Message: "paused: no replicas to answer"}
			break
		}
		if err := r.attempt(ctx, c, t, i, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// SyncOnce runs the sync check alone, one time, holding a concurrency slot
// like every other check.
func (r *Runner) SyncOnce(ctx context.Context, c Checker, t Target) (Check, error) {
	res := NewResult()
	if err := r.attempt(ctx, c, t, 0, &res); err != nil {
		return Check{}, err
	}
	return res.Checks[0], nil
}

// attempt runs check i once, holding a concurrency slot.
func (r *Runner) attempt(ctx context.Context, checker Checker, t Target, i int, res *Result) error {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.sem }()
	start := r.clock.Now()
	var c Check
	switch i {
	case 0:
		c, res.Timeout = checker.Sync(ctx, t)
	case 1:
		c, res.Paused = checker.Readiness(ctx, t)
	default:
		c, res.LiveURL = checker.Reachability(ctx, t)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	end := r.clock.Now()
	c.Attempts = res.Checks[i].Attempts + 1
	c.CheckedAt = end.UTC()
	c.Duration = end.Sub(start)
	res.Checks[i] = c
	r.observe(c.Name, c.State, c.Duration)
	return nil
}
