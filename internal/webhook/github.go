package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v81/github"

	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// GitHub configures deployment statuses on one repository.
type GitHub struct {
	// Token authenticates the requests.
	Token string
	// Owner and Repo name the repository (usually the fleet repository).
	Owner, Repo string
	// BaseURL of the REST API; default https://api.github.com/.
	BaseURL string
	// HTTPClient; default a client with a 30s timeout.
	HTTPClient *http.Client
	// UseSpecRevision makes the deployment's ref the apps-repo commit
	// (spec-revision) instead of the fleet revision's commit.
	UseSpecRevision bool
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

// githubWorker posts statuses in the order of the phase changes.
type githubWorker struct {
	cfg     *GitHub
	client  *github.Client
	st      store.Store
	metrics *metrics
	log     *slog.Logger

	// waitSpec defers creating a GitHub deployment until the cluster
	// confirmed its spec revision (or it ended), so that its ref and payload
	// name the right apps-repo commit.
	waitSpec bool

	mu     sync.Mutex
	queue  []githubItem
	signal chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// githubItem is one state to post; restate posts it even when GitHub already
// has a status in that state (a failure whose reason changed).
type githubItem struct {
	d       store.Deployment
	restate bool
}

func newGitHubWorker(cfg *GitHub, st store.Store, m *metrics, log *slog.Logger, waitSpec bool) *githubWorker {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	c := github.NewClient(hc).WithAuthToken(cfg.Token)
	if cfg.BaseURL != "" {
		base := cfg.BaseURL
		if !strings.HasSuffix(base, "/") {
			base += "/"
		}
		if u, err := url.Parse(base); err == nil {
			c.BaseURL = u
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &githubWorker{cfg: cfg, client: c, st: st, metrics: m, log: log, waitSpec: waitSpec,
		signal: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

func (g *githubWorker) start() { go g.loop() }

// stop posts what is queued (each request bounded) and ends the worker.
func (g *githubWorker) stop() {
	g.mu.Lock()
	g.queue = append(g.queue, githubItem{}) // the stop marker
	g.mu.Unlock()
	select {
	case g.signal <- struct{}{}:
	default:
	}
	select {
	case <-g.done:
	case <-time.After(30 * time.Second):
		g.cancel()
		<-g.done
	}
	g.cancel()
}

func (g *githubWorker) enqueue(d store.Deployment, restate bool) {
	if githubState(d.Phase) == "" && d.GitHubID != 0 {
		return
	}
	g.mu.Lock()
	g.queue = append(g.queue, githubItem{d: d, restate: restate})
	g.mu.Unlock()
	select {
	case g.signal <- struct{}{}:
	default:
	}
}

func (g *githubWorker) loop() {
	defer close(g.done)
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-g.signal:
		}
		for {
			g.mu.Lock()
			if len(g.queue) == 0 {
				g.mu.Unlock()
				break
			}
			it := g.queue[0]
			g.queue = g.queue[1:]
			g.mu.Unlock()
			d := it.d
			if d.ID == 0 {
				return
			}
			if err := g.post(d, it.restate); err != nil {
				g.metrics.github.WithLabelValues("error").Inc()
				g.log.Error("GitHub deployment status", "app", d.Project+"/"+d.App, "revision", d.Revision, "err", err)
			}
		}
	}
}

// post creates the GitHub deployment of d if needed and posts its state.
// The phase and message are d's, in the order the phases changed; the spec
// revision is the newest stored, which the cluster may have corrected.
func (g *githubWorker) post(d store.Deployment, restate bool) error {
	cur, err := g.st.Deployment(g.ctx, d.ID)
	if err != nil {
		return err
	}
	state := githubState(d.Phase)
	if cur.GitHubState == state && state != "" && !restate {
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
		}
		d.SpecRevision = cur.SpecRevision
		ref := commitOf(d.Revision)
		if g.cfg.UseSpecRevision && d.SpecRevision != "" {
			ref = d.SpecRevision
		}
		env := d.Project + "/" + d.App
		dep, err := call(g, func(ctx context.Context) (*github.Deployment, *github.Response, error) {
			return g.client.Repositories.CreateDeployment(ctx, g.cfg.Owner, g.cfg.Repo, &github.DeploymentRequest{
				Ref:              github.Ptr(ref),
				Task:             github.Ptr("deploy"),
				AutoMerge:        github.Ptr(false),
				RequiredContexts: &[]string{},
				Environment:      github.Ptr(env),
				Description:      github.Ptr(truncate(fmt.Sprintf("%s at %s", env, d.Revision), 140)),
				Payload: map[string]string{
					"project": d.Project, "app": d.App, "revision": d.Revision, "spec_revision": d.SpecRevision,
				},
			})
		})
		if err != nil {
			return fmt.Errorf("creating deployment: %w", err)
		}
		id = dep.GetID()
		if err := g.st.SetGitHub(g.ctx, d.ID, id, ""); err != nil {
			return err
		}
	}
	if state == "" {
		return nil
	}
	req := &github.DeploymentStatusRequest{
		State:       github.Ptr(state),
		Description: github.Ptr(truncate(string(d.Phase)+": "+d.Message, 140)),
	}
	if state == "success" && d.LiveURL != "" {
		req.EnvironmentURL = github.Ptr(d.LiveURL)
	}
	if _, err := call(g, func(ctx context.Context) (*github.DeploymentStatus, *github.Response, error) {
		return g.client.Repositories.CreateDeploymentStatus(ctx, g.cfg.Owner, g.cfg.Repo, id, req)
	}); err != nil {
		return fmt.Errorf("posting status %s: %w", state, err)
	}
	return g.st.SetGitHub(g.ctx, d.ID, id, state)
}

// latestGitHubID returns the GitHub deployment of the newest of the app's
// deployments before d that has one (0 when none has).
func (g *githubWorker) latestGitHubID(d store.Deployment) (int64, error) {
	before := d.ID
	for range 10 {
		ds, err := g.st.Deployments(g.ctx, d.Project, d.App, 20, before)
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

// call runs one request with up to three attempts on server errors.
func call[T any](g *githubWorker, f func(context.Context) (T, *github.Response, error)) (T, error) {
	var (
		v   T
		err error
	)
	for attempt := range 3 {
		ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
		var resp *github.Response
		v, resp, err = f(ctx)
		cancel()
		if err == nil {
			g.metrics.github.WithLabelValues("ok").Inc()
			return v, nil
		}
		if resp == nil || resp.StatusCode < 500 || g.ctx.Err() != nil {
			return v, err
		}
		select {
		case <-g.ctx.Done():
			return v, err
		case <-time.After(time.Duration(attempt+1) * 500 * time.Millisecond):
		}
	}
	return v, err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
