package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// notice tells the tracker that an event was stored for a deployment.
type notice struct {
	deploymentID int64
	// app is the app of the deployment; a project-wide notice names the
	// project only.
	app layout.AppRef
	// env is the app's environment ("" on a platform without them).
	env           string
	newDeployment bool
	component     string
	health        string
	// terminal: the event is a Flux failure that ends the revision's rollout.
	terminal bool
	recheck  bool
	// projectWide: an event of the project's own Flux objects (see
	// projectEventOf), with its health; it names no deployment.
	projectWide bool
	// remote: the notice came from another replica (or was sent to every
	// one): it is handled here only for an app this replica owns, and
	// never passed on again.
	remote bool
}

// wireNotice is a notice as replicas send it to each other.
type wireNotice struct {
	DeploymentID  int64  `json:"d,omitempty"`
	Project       string `json:"p"`
	App           string `json:"a,omitempty"`
	Env           string `json:"e,omitempty"`
	NewDeployment bool   `json:"n,omitempty"`
	Component     string `json:"c,omitempty"`
	Health        string `json:"h,omitempty"`
	Terminal      bool   `json:"t,omitempty"`
	Recheck       bool   `json:"r,omitempty"`
	ProjectWide   bool   `json:"w,omitempty"`
}

// owns reports whether this replica owns the app in the environment
// (always, without a Coordinator).
func (t *tracker) owns(app layout.AppRef, env string) bool {
	c := t.s.cfg.Coordinator
	return c == nil || c.Owns(app, env)
}

// forward queues a notice for the app's owner (every replica listens; the
// owner acts on it); flushForwards sends what is queued.
func (t *tracker) forward(n notice) {
	t.forwards = append(t.forwards, wireNotice{DeploymentID: n.deploymentID, Project: n.app.Project, App: n.app.Name, Env: n.env, NewDeployment: n.newDeployment,
		Component: n.component, Health: n.health, Terminal: n.terminal, Recheck: n.recheck, ProjectWide: n.projectWide})
}

// maxNoticeBytes keeps a message under NOTIFY's payload limit (8,000 bytes).
const maxNoticeBytes = 7900

// flushForwards sends the queued notices, as few messages as fit.
func (t *tracker) flushForwards() {
	fs := t.forwards
	t.forwards = nil
	for len(fs) > 0 {
		n := len(fs)
		var b []byte
		for {
			var err error
			if b, err = json.Marshal(fs[:n]); err != nil {
				t.s.log.Error("encoding notices", "err", err)
				return
			}
			if len(b) <= maxNoticeBytes || n == 1 {
				break
			}
			n = max(1, n*maxNoticeBytes/len(b))
		}
		if len(b) > maxNoticeBytes {
			// One notice too big: the owner reads the rest from the store.
			w := fs[0]
			b, _ = json.Marshal([]wireNotice{{DeploymentID: w.DeploymentID, Project: w.Project, App: w.App, Env: w.Env, Recheck: true, ProjectWide: w.ProjectWide}})
		}
		if err := t.s.cfg.Coordinator.Notify(t.ctx, string(b)); err != nil && t.ctx.Err() == nil {
			// The owner's periodic round picks the apps up anyway.
			t.s.log.Warn("telling the apps' owners", "notices", n, "err", err)
		}
		fs = fs[n:]
	}
}

// received queues a notice from another replica.
func (t *tracker) received(msg string) {
	var ws []wireNotice
	if err := json.Unmarshal([]byte(msg), &ws); err != nil {
		t.s.log.Warn("a replica's notice", "err", err)
		return
	}
	t.mu.Lock()
	for _, w := range ws {
		t.queue = append(t.queue, notice{deploymentID: w.DeploymentID, app: layout.AppRef{Project: w.Project, Name: w.App}, env: w.Env, newDeployment: w.NewDeployment,
			component: w.Component, health: w.Health, terminal: w.Terminal, recheck: w.Recheck, projectWide: w.ProjectWide, remote: true})
	}
	t.mu.Unlock()
}

// tracker runs the checks of deployments and turns their results into phases.
type tracker struct {
	s      *Server
	runner *probe.Runner

	mu            sync.Mutex
	runs          map[int64]*run
	degradedSince map[int64]time.Time
	// written remembers what was last written per deployment, so that an
	// attempt that changes nothing but counters is not written again. It
	// never stands for the stored phase: each write reads that back and
	// names it as the phase it moves from.
	written map[int64]writtenState
	// healths holds the latest event health per deployment and component: an
	// event that repeats it does not wake the deployment's checks.
	healths map[int64]map[string]string
	// appOf names the app (store.AppKey) of each deployment with state in
	// the maps above, and latest each app's newest deployment seen: the
	// state of older ones is dropped, so memory follows the apps, not the
	// history.
	appOf  map[int64]string
	latest map[string]int64
	queue  []notice
	signal chan struct{}
	// forwards are the notices for other replicas' apps, sent after each
	// turn of the loop (only the loop touches them).
	forwards []wireNotice
	// projectHealth holds the health of each project's latest event of
	// its own Flux objects.
	projectHealth map[string]string

	// persistMu orders phase writes, so the phase log's order is the order
	// in which the decisions were made.
	persistMu sync.Mutex

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type writtenState struct {
	states, full string
	at           time.Time
	// The phase and message written: when the store holds others, another
	// writer moved the deployment since, and the signatures above are stale.
	phase   store.Phase
	message string
}

const (
	// rewriteEvery bounds how stale the stored attempt counters may get.
	rewriteEvery = 10 * time.Second
	// messageEvery bounds how often a deployment whose states did not
	// change is rewritten for new messages alone.
	messageEvery = time.Second
)

// signatures sum up a result: its phase, spec revision and check states,
// and everything a reader sees.
func signatures(v verdict, res probe.Result, live, spec string) (states, full string) {
	var st, b strings.Builder
	fmt.Fprintf(&st, "%s\x00%s\x00%v\x00%s", v.Phase, live, res.Paused, spec)
	for _, c := range res.Checks {
		fmt.Fprintf(&st, "\x00%s\x00%s\x00%d\x00%d", c.Name, c.State, len(c.Components), len(c.Endpoints))
		fmt.Fprintf(&b, "\x00%s", c.Message)
	}
	states = st.String()
	return states, states + "\x00" + v.Message + b.String()
}

// needsWrite tells whether a result must be written given what was last.
func (w writtenState) needsWrite(states, full string, now time.Time) bool {
	switch {
	case states != w.states:
		return true
	case full != w.full:
		return now.Sub(w.at) >= messageEvery
	}
	return now.Sub(w.at) >= rewriteEvery
}

type run struct {
	cancel context.CancelFunc
	wake   chan struct{}
	app    layout.AppRef
	env    string
	// terminal holds a Flux failure of the revision that arrived while the
	// run was going: handled again once it ends, in case the run ended on
	// its own timeout before it saw it (guarded by tracker.mu).
	terminal *notice
}

func newTracker(s *Server) *tracker {
	ctx, cancel := context.WithCancel(context.Background())
	return &tracker{
		s: s,
		runner: probe.NewRunner(probe.RunnerOptions{
			Concurrency: s.cfg.Concurrency, Backoff: s.cfg.Backoff, Clock: s.cfg.Clock,
			Observe: func(check string, st probe.State, took time.Duration) {
				s.metrics.checks.WithLabelValues(check, string(st)).Inc()
				s.metrics.checkSeconds.WithLabelValues(check).Observe(took.Seconds())
			},
		}),
		runs:          map[int64]*run{},
		degradedSince: map[int64]time.Time{},
		written:       map[int64]writtenState{},
		healths:       map[int64]map[string]string{},
		appOf:         map[int64]string{},
		latest:        map[string]int64{},
		projectHealth: map[string]string{},
		signal:        make(chan struct{}, 1),
		ctx:           ctx,
		cancel:        cancel,
	}
}

func (t *tracker) start() error {
	if err := t.resume(); err != nil {
		return err
	}
	t.wg.Add(1)
	go t.loop()
	return nil
}

// resume queues a recheck of every active deployment of the apps this
// replica owns, and sends what the GitHub outbox holds of them (another
// replica owned them, and may have died before it sent it).
func (t *tracker) resume() error {
	active, err := t.s.cfg.Store.ActiveDeployments(t.ctx)
	if err != nil {
		return fmt.Errorf("resuming deployments: %w", err)
	}
	for _, d := range active {
		if !t.owns(d.App, d.Environment) {
			continue
		}
		t.notify(notice{deploymentID: d.ID, app: d.App, env: d.Environment, recheck: true, remote: true})
	}
	if t.s.github != nil {
		// The GitHub reports a replica that died left queued.
		t.s.github.wake()
	}
	return nil
}

// rebalance stops the checks of the apps this replica no longer owns and
// resumes those of the apps it owns.
func (t *tracker) rebalance() {
	t.mu.Lock()
	for id, r := range t.runs {
		if !t.owns(r.app, r.env) {
			r.cancel()
			delete(t.runs, id)
			t.forget(id)
		}
	}
	t.mu.Unlock()
	if err := t.resume(); err != nil && t.ctx.Err() == nil {
		t.s.log.Error("taking over apps", "err", err)
	}
}

func (t *tracker) stop() {
	t.cancel()
	t.wg.Wait()
}

// notify queues a notice; it never blocks.
func (t *tracker) notify(n notice) {
	t.mu.Lock()
	t.queue = append(t.queue, n)
	t.mu.Unlock()
	select {
	case t.signal <- struct{}{}:
	default:
	}
}

func (t *tracker) loop() {
	defer t.wg.Done()
	var tick <-chan time.Time
	if t.s.cfg.RecheckInterval > 0 {
		tk := time.NewTicker(t.s.cfg.RecheckInterval)
		defer tk.Stop()
		tick = tk.C
	}
	var (
		changed <-chan struct{}
		notices <-chan string
	)
	if c := t.s.cfg.Coordinator; c != nil {
		changed, notices = c.Changed(), c.Notices()
	}
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-t.signal:
		case <-tick:
			t.periodic()
		case <-changed:
			t.rebalance()
		case msg := <-notices:
			t.received(msg)
		}
		t.mu.Lock()
		q := t.queue
		t.queue = nil
		t.mu.Unlock()
		for _, n := range q {
			t.handle(n)
		}
		if len(t.forwards) > 0 {
			t.flushForwards()
		}
	}
}

// periodic queues a recheck of every rolled-out app this replica owns, and
// resumes its apps rolling out without a run here.
func (t *tracker) periodic() {
	apps, err := t.s.cfg.Store.Apps(t.ctx)
	if err != nil {
		t.s.log.Error("listing apps for recheck", "err", err)
		return
	}
	for _, a := range apps {
		checked, _ := t.s.proberOf(a.Environment)
		due := a.Phase == store.PhaseDegraded ||
			(checked != nil && (a.Phase == store.PhaseRunning || a.Phase == store.PhasePaused || a.Phase == store.PhaseFailed))
		t.mu.Lock()
		if a.Phase == store.PhasePending || a.Phase == store.PhaseDeploying {
			// A rollout another replica owned, or a notice that was lost.
			due = t.runs[a.DeploymentID] == nil
		}
		if due && t.owns(a.AppRef, a.Environment) {
			t.queue = append(t.queue, notice{deploymentID: a.DeploymentID, app: a.AppRef, env: a.Environment, recheck: true, remote: true})
		}
		t.mu.Unlock()
	}
}

// handle decides what a notice starts: a rollout run, a recheck, or a wake-up
// of the run already going.
func (t *tracker) handle(n notice) {
	if t.ctx.Err() != nil {
		return
	}
	if t.s.cfg.Coordinator != nil && !n.remote && (n.projectWide || !t.owns(n.app, n.env)) {
		// To the owner; a project's event to every replica, each acting
		// for the apps it owns.
		t.forward(n)
		return
	}
	if n.projectWide {
		t.handleProject(n)
		return
	}
	if !t.owns(n.app, n.env) {
		return
	}
	t.mu.Lock()
	key := store.AppKey(n.app, n.env)
	if n.deploymentID > t.latest[key] {
		t.latest[key] = n.deploymentID
		// The app's older deployments are superseded: forget them and, for
		// a new deployment, stop their checks.
		for id, app := range t.appOf {
			if app == key && id != n.deploymentID {
				t.forget(id)
			}
		}
		if n.newDeployment {
			for id, r := range t.runs {
				if id != n.deploymentID && r.app == n.app && r.env == n.env {
					r.cancel()
					delete(t.runs, id)
					t.forget(id)
				}
			}
		}
	}
	newest := n.deploymentID >= t.latest[key]
	if newest {
		t.appOf[n.deploymentID] = key
	}
	changed := true
	if n.component != "" && newest {
		hs := t.healths[n.deploymentID]
		if hs == nil {
			hs = map[string]string{}
			t.healths[n.deploymentID] = hs
		}
		changed = hs[n.component] != n.health
		hs[n.component] = n.health
	}
	if r := t.runs[n.deploymentID]; r != nil {
		if n.terminal {
			r.terminal = &n
		}
		if changed {
			select {
			case r.wake <- struct{}{}:
			default:
			}
		}
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	d, err := t.s.cfg.Store.Deployment(t.ctx, n.deploymentID)
	if err != nil {
		t.s.log.Error("reading deployment", "id", n.deploymentID, "err", err)
		return
	}
	app, err := t.s.cfg.Store.App(t.ctx, d.App, d.Environment)
	if err != nil {
		t.s.log.Error("reading app", "app", store.AppKey(d.App, d.Environment), "err", err)
		return
	}
	current := app.DeploymentID == d.ID
	switch {
	case !current && d.Finished():
		// A superseded deployment: its history is kept, its checks are over.
	case d.Phase == store.PhasePending || d.Phase == store.PhaseDeploying:
		t.startRun(d, modeRollout, d.StartedAt)
	case d.Phase == store.PhaseFailed && n.health == store.HealthHealthy && current:
		// Flux reports success after the failure: check the revision again.
		t.startRun(d, modeRollout, t.s.now())
	case d.Phase == store.PhaseFailed && current:
		// Only Flux's own verdict (when the webhook's timeout came first) or
		// the app's deletion changes a failed deployment.
		t.startRun(d, modeFinal, d.StartedAt)
	case current && (d.Phase == store.PhaseRunning || d.Phase == store.PhasePaused || d.Phase == store.PhaseDegraded):
		if n.recheck && d.Phase == store.PhaseDegraded {
			t.mu.Lock()
			if _, ok := t.degradedSince[d.ID]; !ok {
				t.degradedSince[d.ID] = d.UpdatedAt
			}
			t.mu.Unlock()
		}
		t.startRun(d, modeRecheck, d.StartedAt)
	}
}

// handleProject wakes the checks of a project's apps on an event of the
// project's own Flux objects: the runs going at once and, when the event
// reports a failure the project's previous one did not, the apps whose
// deployment is not rolled out without a run (a failed one's final check
// then takes the project's failure as Flux's verdict). The sync checks
// judge the project's objects themselves; the event names no app.
func (t *tracker) handleProject(n notice) {
	t.mu.Lock()
	last, seen := t.projectHealth[n.app.Project]
	t.projectHealth[n.app.Project] = n.health
	busy := map[string]bool{}
	for _, r := range t.runs {
		if r.app.Project != n.app.Project {
			continue
		}
		busy[store.AppKey(r.app, r.env)] = true
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	t.mu.Unlock()
	if n.health != store.HealthFailed || (seen && last == store.HealthFailed) {
		return
	}
	apps, err := t.s.cfg.Store.Apps(t.ctx)
	if err != nil {
		t.s.log.Error("listing apps for a project's event", "project", n.app.Project, "err", err)
		return
	}
	for _, a := range apps {
		switch {
		case a.Project != n.app.Project || busy[store.AppKey(a.AppRef, a.Environment)]:
		case a.Phase == store.PhasePending || a.Phase == store.PhaseDeploying || a.Phase == store.PhaseFailed:
			t.handle(notice{deploymentID: a.DeploymentID, app: a.AppRef, env: a.Environment, recheck: true, remote: true})
		}
	}
}

// remember records what was written of a deployment (t.mu held).
func (t *tracker) remember(id int64, phase store.Phase, now time.Time, w writtenState) {
	t.written[id] = w
	if phase == store.PhaseDegraded {
		if _, ok := t.degradedSince[id]; !ok {
			t.degradedSince[id] = now
		}
	} else {
		delete(t.degradedSince, id)
	}
}

// forget drops what is held in memory of a deployment (t.mu held).
func (t *tracker) forget(id int64) {
	delete(t.written, id)
	delete(t.degradedSince, id)
	delete(t.healths, id)
	delete(t.appOf, id)
}

func (t *tracker) startRun(d store.Deployment, mode runMode, started time.Time) {
	ctx, cancel := context.WithCancel(t.ctx)
	r := &run{cancel: cancel, wake: make(chan struct{}, 1), app: d.App, env: d.Environment}
	t.mu.Lock()
	t.runs[d.ID] = r
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		defer func() {
			t.mu.Lock()
			if t.runs[d.ID] == r {
				delete(t.runs, d.ID)
			}
			again := r.terminal
			t.mu.Unlock()
			if again != nil && ctx.Err() == nil {
				t.notify(*again)
			}
		}()
		t.execute(ctx, d, mode, started, r.wake)
	}()
}

// target is what the checks of d look at. A pull request's preview has
// its workloads and its Flux objects in its own namespace: only that one
// is read (the Flux namespace's objects of the app's name are another
// environment's).
func (t *tracker) target(d store.Deployment) probe.Target {
	tg := probe.Target{App: d.App, Revision: d.Revision, FluxNamespace: t.s.cfg.FluxNamespace}
	if _, ok := layout.PreviewOf(d.Environment); ok {
		tg.Namespace = appNamespace(d.App.Project, d.Environment)
		tg.FluxNamespace = tg.Namespace
	}
	return tg
}

func (t *tracker) execute(ctx context.Context, d store.Deployment, mode runMode, started time.Time, wake <-chan struct{}) {
	// The checker of the cluster the deployment's environment runs on.
	// On a cluster the webhook does not read, this one's objects of the
	// same names are another environment's: the events alone judge it,
	// as without a cluster.
	base, unread := t.s.proberOf(d.Environment)
	chk := &deploymentChecker{base: base, st: t.s.cfg.Store, id: d.ID, artifacts: t.s.artifactsOf}
	if unread != "" {
		chk.skipped = t.s.notRead(unread)
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = t.s.cfg.DefaultTimeout
	}
	var (
		res probe.Result
		err error
	)
	switch mode {
	case modeFinal:
		res, ok := t.finalCheck(ctx, chk, d)
		if ok {
			t.apply(ctx, d.ID, mode, res, true)
		}
		return
	case modeRecheck:
		res, err = t.runner.Once(ctx, chk, t.target(d))
	default:
		res, err = t.runner.Run(ctx, chk, t.target(d), started, timeout, wake, func(r probe.Result) {
			t.apply(ctx, d.ID, mode, r, false)
		})
	}
	if err != nil {
		return
	}
	t.apply(ctx, d.ID, mode, res, true)
}

// finalCheck runs the sync check of a failed deployment once. It returns
// the deployment's result with that check in it when the check changes the
// verdict: the app is gone, or the deployment failed on the webhook's own
// timeout and Flux has now failed the revision itself.
func (t *tracker) finalCheck(ctx context.Context, chk probe.Checker, d store.Deployment) (probe.Result, bool) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sync, err := t.runner.SyncOnce(ctx, chk, t.target(d))
	if err != nil {
		return probe.Result{}, false
	}
	res := decodeResult(d)
	switch {
	case sync.State == probe.StateGone:
	case sync.State == probe.StateFailed && res.TimedOut:
		res.TimedOut = false
	default:
		return res, false
	}
	prev := res.Check(probe.CheckSync)
	sync.Attempts, sync.CheckedAt = prev.Attempts+1, t.s.now()
	for i := range res.Checks {
		if res.Checks[i].Name == probe.CheckSync {
			res.Checks[i] = sync
		}
	}
	return res, true
}

// apply evaluates a result and writes the deployment's phase and checks.
func (t *tracker) apply(ctx context.Context, id int64, mode runMode, res probe.Result, done bool) {
	t.persistMu.Lock()
	defer t.persistMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	d, last, ok := t.current(ctx, id)
	if !ok {
		return
	}
	in := evalInput{Mode: mode, Previous: d.Phase, Result: res, Done: done, Timeout: res.Timeout, Now: t.s.now()}
	if in.Timeout <= 0 {
		in.Timeout = d.Timeout
	}
	if in.Timeout <= 0 {
		in.Timeout = t.s.cfg.DefaultTimeout
	}
	t.mu.Lock()
	in.DegradedSince = t.degradedSince[id]
	t.mu.Unlock()
	v := evaluate(in)
	raw, err := json.Marshal(res)
	if err != nil {
		t.s.log.Error("encoding checks", "err", err)
		return
	}
	u := t.update(d, in, v, raw)
	states, full := signatures(v, res, u.LiveURL, u.SpecRevision)
	if !done && !last.needsWrite(states, full, in.Now) {
		return
	}
	if done && last.full == full {
		return
	}
	change, err := t.s.cfg.Store.UpdateDeployment(ctx, u)
	if errors.Is(err, store.ErrConflict) {
		// Another writer moved the deployment first: the next attempt
		// starts from what it wrote.
		t.s.log.Debug("phase transition refused", "id", id, "err", err)
		t.mu.Lock()
		delete(t.written, id)
		t.mu.Unlock()
		return
	}
	if err != nil {
		t.s.log.Error("writing deployment", "id", id, "err", err)
		return
	}
	t.wrote(ctx, u, writtenState{states: states, full: full, at: in.Now, phase: v.Phase, message: v.Message}, change)
}

// current reads the deployment as the store holds it now, not as this
// replica last wrote it: another writer may have moved it since, and the
// transition apply writes names the phase read here (compare-and-set). It
// returns what this replica last wrote of it, nothing when that is stale,
// and keeps when the deployment became degraded. False: the deployment
// cannot be read, or its app moved to another replica.
func (t *tracker) current(ctx context.Context, id int64) (store.Deployment, writtenState, bool) {
	d, err := t.s.cfg.Store.Deployment(ctx, id)
	if err != nil {
		t.s.log.Error("reading deployment", "id", id, "err", err)
		return d, writtenState{}, false
	}
	if !t.owns(d.App, d.Environment) {
		// The app moved to another replica: its checks here are ending.
		return d, writtenState{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	last := t.written[id]
	if last.phase != d.Phase || last.message != d.Message {
		// Written elsewhere since: what this replica remembers is stale.
		last = writtenState{}
	}
	if d.Phase != store.PhaseDegraded {
		delete(t.degradedSince, id)
	} else if _, ok := t.degradedSince[id]; !ok {
		t.degradedSince[id] = d.UpdatedAt
	}
	return d, last, true
}

// update is the write of verdict v, reached from in, on deployment d as
// read before: its phase and message, the checks (raw, in.Result encoded),
// when it finished, its live URL and spec revision, and whether GitHub
// hears of it.
func (t *tracker) update(d store.Deployment, in evalInput, v verdict, raw []byte) store.DeploymentUpdate {
	mode, res, now := in.Mode, in.Result, in.Now
	specKnown := decodeResult(d).Check(probe.CheckSync).SpecRevision() != ""
	finished := time.Time{}
	switch {
	case mode == modeRecheck || mode == modeFinal:
		finished = d.FinishedAt
		if finished.IsZero() {
			finished = now
		}
	case v.Phase.Final():
		finished = now
	}
	live := res.LiveURL
	switch v.Phase {
	case store.PhaseDeleted:
		live = ""
	case store.PhaseFailed:
	default:
		live = cmpOr(live, d.LiveURL)
	}
	// The spec revision read from the cluster wins over the events' (the
	// first event of a revision may come before Flux applied its annotation).
	liveSpec := res.Check(probe.CheckSync).SpecRevision()
	spec := cmpOr(liveSpec, d.SpecRevision)
	// A deployment found deleted before the cluster ever confirmed its spec
	// revision is the fleet revision that removed the app: its events named
	// the previous spec, and no spec of the app is left to name.
	noSpec := v.Phase == store.PhaseDeleted && liveSpec == "" && !specKnown
	if noSpec {
		spec = ""
	}
	// No new phase may still be news to GitHub: a failure whose reason is
	// now Flux's own, or the spec revision a deferred GitHub deployment
	// waited for.
	restate := v.Phase == store.PhaseFailed && d.Phase == store.PhaseFailed && v.Message != d.Message
	report := store.ReportNone
	if t.s.github != nil {
		report = store.ReportOnChange
		if restate || (liveSpec != "" && !specKnown) {
			report = store.ReportAlways
		}
	}
	return store.DeploymentUpdate{
		ID: d.ID, From: d.Phase, Phase: v.Phase, Message: v.Message, Checks: raw, LiveURL: live, SpecRevision: spec, NoSpecRevision: noSpec,
		Timeout: in.Timeout, FinishedAt: finished, UpdatedAt: now, Report: report, Restate: restate,
	}
}

// wrote follows the write u of a deployment, which made change (nil: the
// phase stayed): it remembers what was written, wakes the GitHub reporter
// when there is something to report, and announces the change.
func (t *tracker) wrote(ctx context.Context, u store.DeploymentUpdate, w writtenState, change *store.PhaseChange) {
	t.mu.Lock()
	// A deployment superseded meanwhile keeps nothing in memory.
	if _, ok := t.appOf[u.ID]; ok && ctx.Err() == nil {
		t.remember(u.ID, w.phase, w.at, w)
	}
	t.mu.Unlock()
	if t.s.github != nil && (change != nil || u.Report == store.ReportAlways) {
		t.s.github.wake()
	}
	if change == nil {
		return
	}
	t.s.log.Info("phase changed", "app", store.AppKey(change.App, change.Environment), "revision", change.Revision,
		"from", string(change.From), "to", string(change.To), "message", change.Message)
	t.s.metrics.phases.WithLabelValues(string(change.To)).Inc()
	t.s.hub.notify()
}

// deploymentChecker adds what Flux's events say to the cluster checks: with
// no cluster the sync check is judged from the events alone, and with one a
// terminal Flux failure of the revision fails the sync check at once. The
// app's Kustomizations missing reads as its deletion only once the checks of
// the deployment saw them.
type deploymentChecker struct {
	base probe.Checker
	// skipped says why, without base, readiness and reachability are
	// skipped ("no cluster configured" when empty).
	skipped string
	st      store.Store
	id      int64
	// artifacts returns what is known of the artifact revisions the
	// deployment's fleet revision pins (Server.artifactsOf).
	artifacts func(context.Context, store.Deployment) map[string]string
}

func (c *deploymentChecker) Sync(ctx context.Context, t probe.Target) (probe.Check, time.Duration) {
	d, err := c.st.Deployment(ctx, c.id)
	if err != nil {
		return probe.Check{Name: probe.CheckSync, State: probe.StateProgressing, Message: "reading deployment: " + err.Error()}, 0
	}
	ev := eventSync(d.Components)
	if c.base == nil {
		return ev, 0
	}
	if c.artifacts != nil {
		t.Artifacts = c.artifacts(ctx, d)
	}
	chk, timeout := c.base.Sync(ctx, t)
	if chk.State == probe.StateGone {
		if !c.sawApp(ctx, d) {
			// The checks never saw the app's Kustomizations: not there yet,
			// rather than gone.
			chk.State = probe.StateProgressing
		}
		return chk, timeout
	}
	if ev.State == probe.StateFailed && chk.State != probe.StateFailed {
		chk.State, chk.Message = probe.StateFailed, ev.Message
	}
	return chk, timeout
}

// sawApp reports whether the checks saw the app's Kustomizations, for this
// deployment or, when it is the fleet revision that removed them, for the
// app's deployment before it.
func (c *deploymentChecker) sawApp(ctx context.Context, d store.Deployment) bool {
	saw := func(d store.Deployment) bool {
		s := decodeResult(d).Check(probe.CheckSync)
		return s.State != probe.StateGone && len(s.Components) > 0
	}
	if saw(d) {
		return true
	}
	prev, err := c.st.DeploymentsIn(ctx, d.App, d.Environment, 1, d.ID)
	return err == nil && len(prev) == 1 && saw(prev[0])
}

func (c *deploymentChecker) skipWhy() string {
	if c.skipped != "" {
		return c.skipped
	}
	return "no cluster configured"
}

func (c *deploymentChecker) Readiness(ctx context.Context, t probe.Target) (probe.Check, bool) {
	if c.base == nil {
		return probe.Check{Name: probe.CheckReadiness, State: probe.StateSkipped, Message: c.skipWhy()}, false
	}
	return c.base.Readiness(ctx, t)
}

func (c *deploymentChecker) Reachability(ctx context.Context, t probe.Target) (probe.Check, string) {
	if c.base == nil {
		return probe.Check{Name: probe.CheckReachability, State: probe.StateSkipped, Message: c.skipWhy()}, ""
	}
	return c.base.Reachability(ctx, t)
}

// eventSync judges the sync check from the latest Flux event of each component.
func eventSync(comps []store.ComponentState) probe.Check {
	c := probe.Check{Name: probe.CheckSync}
	if len(comps) == 0 {
		c.State, c.Message = probe.StateProgressing, "no Flux event for this revision yet"
		return c
	}
	var failed, waiting []string
	for _, s := range comps {
		cs := probe.ComponentStatus{Component: s.Name, Kind: s.Kind, Name: s.Name, Message: s.Reason + ": " + s.Message}
		switch {
		case s.Health == store.HealthFailed && s.Terminal:
			cs.State = probe.StateFailed
			failed = append(failed, s.Name+": "+cs.Message)
		case s.Health == store.HealthHealthy:
			cs.State = probe.StatePassed
		default:
			cs.State = probe.StateProgressing
			waiting = append(waiting, s.Name+": "+cs.Message)
		}
		c.Components = append(c.Components, cs)
	}
	switch {
	case len(failed) > 0:
		c.State, c.Message = probe.StateFailed, strings.Join(failed, "; ")
	case len(waiting) > 0:
		c.State, c.Message = probe.StateProgressing, strings.Join(waiting, "; ")
	default:
		c.State, c.Message = probe.StatePassed, fmt.Sprintf("%d components reconciled (from Flux events)", len(comps))
	}
	return c
}
