package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// GitHub configures deployment statuses on one repository.
type GitHub struct {
	// Reporter creates the deployments and posts their statuses (a
	// github.Client).
	Reporter github.DeploymentReporter
	// Repo is the repository (usually the fleet repository).
	Repo github.Repo
	// UseSpecRevision makes the deployment's ref the apps-repo commit
	// (spec-revision) instead of the fleet revision's commit.
	UseSpecRevision bool
	// AppsRepo is the apps repository, whose pull requests have previews:
	// a preview (environment pr-N) is reported there, on the pull
	// request's head commit (its spec revision). Unset: Repo when
	// UseSpecRevision (Repo is then the apps repository); without either
	// no preview is reported.
	AppsRepo github.Repo
	// Sections, when set, keeps the preview section of each pull
	// request's review comment (on the apps repository) up to date with
	// the state of its preview's apps (a github.Client).
	Sections github.SectionUpdater
}

// previewRepo is the repository previews are reported on, if any.
func (g *GitHub) previewRepo() (github.Repo, bool) {
	switch {
	case g.AppsRepo != (github.Repo{}):
		return g.AppsRepo, true
	case g.UseSpecRevision:
		return g.Repo, true
	}
	return github.Repo{}, false
}

// repoOf is the repository the deployments of an environment are
// reported on: the apps repository for a preview, Repo for the others.
func (g *GitHub) repoOf(env string) (github.Repo, bool) {
	if _, ok := layout.PreviewOf(env); ok {
		return g.previewRepo()
	}
	return g.Repo, true
}

func (g *GitHub) validate() error {
	if g.Reporter == nil {
		return errors.New("webhook: Config.GitHub.Reporter is required")
	}
	if g.Repo.Owner == "" || g.Repo.Name == "" {
		return fmt.Errorf("webhook: Config.GitHub.Repo %q: want owner/name", g.Repo)
	}
	if g.AppsRepo != (github.Repo{}) && (g.AppsRepo.Owner == "" || g.AppsRepo.Name == "") {
		return fmt.Errorf("webhook: Config.GitHub.AppsRepo %q: want owner/name", g.AppsRepo)
	}
	return nil
}

// githubState maps a phase to a GitHub deployment status state.
func githubState(p store.Phase) string {
	switch p {
	case store.PhaseDeploying:
		return "in_progress"
	case store.PhaseRunning, store.PhasePaused:
		return "success"
	case store.PhaseFailed, store.PhaseDegraded:
		return "failure"
	case store.PhaseDeleted:
		return "inactive"
	}
	return ""
}

// commitOf returns the commit of a Flux revision ("main@sha1:<sha>" → sha).
func commitOf(rev string) string {
	if i := strings.LastIndex(rev, ":"); i >= 0 && strings.Contains(rev, "sha") {
		return rev[i+1:]
	}
	return rev
}

// githubWorker posts the states queued in the store's GitHub outbox, in
// the order the phase changes were written, for the apps this replica owns.
type githubWorker struct {
	cfg     *GitHub
	st      store.Store
	metrics *metrics
	log     *slog.Logger

	// waitSpec defers creating a GitHub deployment until the cluster
	// confirmed its spec revision (or it ended), so that its ref and payload
	// name the right apps-repo commit.
	waitSpec bool
	// slots returns the app slots this replica owns (nil: every app).
	slots func() []int

	signal chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	stopc  chan struct{}
	done   chan struct{}
}

// outboxPoll is how often the outbox is read without a wake-up: it finds
// the reports a replica that died left for the apps this one took over.
const outboxPoll = time.Second

func newGitHubWorker(cfg *GitHub, st store.Store, m *metrics, log *slog.Logger, waitSpec bool) *githubWorker {
	ctx, cancel := context.WithCancel(context.Background())
	return &githubWorker{cfg: cfg, st: st, metrics: m, log: log, waitSpec: waitSpec,
		signal: make(chan struct{}, 1), ctx: ctx, cancel: cancel, stopc: make(chan struct{}), done: make(chan struct{})}
}

func (g *githubWorker) start() { go g.loop() }

// stop posts what is queued (each request bounded, 30s in all) and ends
// the worker; what is left stays queued for the next start or another
// replica.
func (g *githubWorker) stop() {
	close(g.stopc)
	select {
	case <-g.done:
	case <-time.After(30 * time.Second):
		g.cancel()
		<-g.done
	}
	g.cancel()
}

// wake makes the worker read the outbox now.
func (g *githubWorker) wake() {
	select {
	case g.signal <- struct{}{}:
	default:
	}
}

func (g *githubWorker) loop() {
	defer close(g.done)
	tk := time.NewTicker(outboxPoll)
	defer tk.Stop()
	for {
		stopping := false
		select {
		case <-g.ctx.Done():
			return
		case <-g.stopc:
			stopping = true
		case <-g.signal:
		case <-tk.C:
		}
		g.drain()
		if stopping {
			return
		}
	}
}

// drain posts the queued reports of the apps this replica owns, oldest
// first, until none is left.
func (g *githubWorker) drain() {
	for g.ctx.Err() == nil {
		var slots []int
		if g.slots != nil {
			if slots = g.slots(); len(slots) == 0 {
				return
			}
		}
		sent, err := g.st.SendOutbox(g.ctx, slots, func(e store.OutboxEntry) {
			if err := g.post(e); err != nil {
				g.metrics.github.WithLabelValues("error").Inc()
				g.log.Error("GitHub deployment status", "app", store.AppKey(e.App, e.Environment), "deployment", e.DeploymentID, "err", err)
			}
			if pr, ok := layout.PreviewOf(e.Environment); ok {
				if err := g.previewSection(pr, e.Environment); err != nil {
					g.metrics.github.WithLabelValues("error").Inc()
					g.log.Error("the preview section of the review comment", "pull_request", pr, "err", err)
				}
			}
		})
		if err != nil {
			if g.ctx.Err() == nil {
				g.log.Error("reading the GitHub outbox", "err", err)
			}
			return
		}
		if !sent {
			return
		}
	}
}

// post creates the GitHub deployment of e's deployment if needed and posts
// e's state. The phase and message are e's, in the order the phases
// changed; the spec revision is the newest stored, which the cluster may
// have corrected.
func (g *githubWorker) post(e store.OutboxEntry) error {
	cur, err := g.st.Deployment(g.ctx, e.DeploymentID)
	if err != nil {
		return err
	}
	d := store.Deployment{ID: cur.ID, App: cur.App, Environment: cur.Environment, Revision: cur.Revision,
		Phase: e.Phase, Message: e.Message, LiveURL: e.LiveURL}
	repo, ok := g.cfg.repoOf(d.Environment)
	if !ok {
		// A preview, with no apps repository to report it on.
		return nil
	}
	_, preview := layout.PreviewOf(d.Environment)
	state := githubState(d.Phase)
	if state == "" && cur.GitHubID != 0 {
		return nil
	}
	if cur.GitHubState == state && state != "" && !e.Restate {
		return nil
	}
	id := cur.GitHubID
	if id == 0 && state == "inactive" {
		// The app was deleted by a fleet revision that never had a GitHub
		// deployment of its own: retire the one that was active, the newest
		// the app has.
		if id, err = g.latestGitHubID(d); err != nil || id == 0 {
			return err
		}
	}
	if id == 0 {
		switch {
		case g.waitSpec && !d.Phase.Final() && cur.SpecRevision != "" &&
			decodeResult(cur).Check(probe.CheckSync).SpecRevision() == "":
			// The spec revision is still the events' guess: wait for the
			// cluster's (a later state of this deployment is queued then).
			return nil
		case preview && cur.SpecRevision == "":
			// A preview is reported on the pull request's head commit,
			// which no event named yet.
			return nil
		}
		d.SpecRevision = cur.SpecRevision
		if id, err = g.createDeployment(repo, d, e.Retried); err != nil {
			return err
		}
		if err := g.st.SetGitHub(g.ctx, d.ID, id, ""); err != nil {
			return err
		}
	}
	if state == "" {
		return nil
	}
	status := github.DeploymentStatus{
		State:       state,
		Description: truncate(string(d.Phase)+": "+d.Message, 140),
		// An environment of the platform is every app's: GitHub's
		// auto_inactive would retire the other apps' deployments there.
		KeepOthersActive: d.Environment != "",
	}
	if state == "success" {
		status.EnvironmentURL = d.LiveURL
	}
	if e.Retried {
		// An earlier sender may have posted it and died before recording
		// it: GitHub's newest status tells.
		var last github.DeploymentStatus
		if err := g.call(func(ctx context.Context) (err error) {
			last, err = g.cfg.Reporter.LastDeploymentStatus(ctx, repo, id)
			return err
		}); err != nil {
			return err
		}
		if last.State == status.State && last.Description == status.Description {
			return g.st.SetGitHub(g.ctx, d.ID, id, state)
		}
	}
	if err := g.call(func(ctx context.Context) error {
		return g.cfg.Reporter.SetDeploymentStatus(ctx, repo, id, status)
	}); err != nil {
		return err
	}
	if err := g.st.SetGitHub(g.ctx, d.ID, id, state); err != nil {
		return err
	}
	if state == "success" && d.Environment != "" {
		return g.retireEarlier(repo, d)
	}
	return nil
}

// createDeployment creates the GitHub deployment of d on repo, at its
// fleet commit (or its spec revision, with UseSpecRevision; a preview's
// always at its spec revision, the pull request's head commit, and
// transient), and returns its id. A report sent again after its sender
// died (retried) first looks for the deployment that sender may have
// created.
func (g *githubWorker) createDeployment(repo github.Repo, d store.Deployment, retried bool) (int64, error) {
	var id int64
	_, preview := layout.PreviewOf(d.Environment)
	ref := commitOf(d.Revision)
	if (g.cfg.UseSpecRevision || preview) && d.SpecRevision != "" {
		ref = d.SpecRevision
	}
	what := d.App.Ref()
	payload := map[string]string{
		"project": d.App.Project, "app": d.App.Name, "revision": d.Revision, "spec_revision": d.SpecRevision,
	}
	if d.Environment != "" {
		what += " in " + d.Environment
		payload["environment"] = d.Environment
	}
	env := githubEnvironment(d)
	if retried {
		// An earlier sender may have created it and died before
		// storing its id.
		if err := g.call(func(ctx context.Context) (err error) {
			id, err = g.cfg.Reporter.FindDeployment(ctx, repo, ref, env, payload)
			return err
		}); err != nil {
			return 0, err
		}
	}
	if id == 0 {
		err := g.call(func(ctx context.Context) (err error) {
			id, err = g.cfg.Reporter.CreateDeployment(ctx, repo, github.Deployment{
				Ref:         ref,
				Environment: env,
				Description: truncate(fmt.Sprintf("%s at %s", what, d.Revision), 140),
				Payload:     payload,
				Transient:   preview,
			})
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	return id, nil
}

// githubEnvironment is the GitHub environment of a deployment: the
// platform's environment, where GitHub's protection rules for it apply;
// "project/app" on a platform without environments.
func githubEnvironment(d store.Deployment) string {
	if d.Environment != "" {
		return d.Environment
	}
	return d.App.Ref()
}

// retireEarlier marks inactive the GitHub deployments of the app's
// earlier deployments in d's environment that are still a success there,
// or that ran and were degraded when d came (its rollout itself may have
// made them so: Flux reconciling d's revision): what GitHub's
// auto_inactive does for an environment of one app, done for this app
// alone. They are on repo, d's environment's.
func (g *githubWorker) retireEarlier(repo github.Repo, d store.Deployment) error {
	ds, err := g.st.DeploymentsIn(g.ctx, d.App, d.Environment, 20, d.ID)
	if err != nil {
		return err
	}
	for _, p := range ds {
		ran := p.GitHubState == "success" || (p.GitHubState == "failure" && p.Phase == store.PhaseDegraded)
		if p.GitHubID == 0 || !ran {
			continue
		}
		st := github.DeploymentStatus{State: "inactive", Description: truncate("superseded by revision "+d.Revision, 140), KeepOthersActive: true}
		if err := g.call(func(ctx context.Context) error {
			return g.cfg.Reporter.SetDeploymentStatus(ctx, repo, p.GitHubID, st)
		}); err != nil {
			return err
		}
		if err := g.st.SetGitHub(g.ctx, p.ID, p.GitHubID, "inactive"); err != nil {
			return err
		}
	}
	return nil
}

// latestGitHubID returns the GitHub deployment of the newest of the app's
// deployments in d's environment before d that has one (0 when none has).
func (g *githubWorker) latestGitHubID(d store.Deployment) (int64, error) {
	before := d.ID
	for range 10 {
		ds, err := g.st.DeploymentsIn(g.ctx, d.App, d.Environment, 20, before)
		if err != nil {
			return 0, err
		}
		for _, p := range ds {
			if p.GitHubID != 0 {
				return p.GitHubID, nil
			}
		}
		if len(ds) < 20 {
			break
		}
		before = ds[len(ds)-1].ID
	}
	return 0, nil
}

// call runs one request, each attempt bounded to 30s, with up to three
// attempts on server errors.
func (g *githubWorker) call(f func(context.Context) error) error {
	var err error
	for attempt := range 3 {
		ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
		err = f(ctx)
		cancel()
		if err == nil {
			g.metrics.github.WithLabelValues("ok").Inc()
			return nil
		}
		if !github.IsServerError(err) || g.ctx.Err() != nil {
			return err
		}
		select {
		case <-g.ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * 500 * time.Millisecond):
		}
	}
	return err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
