package webhook

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// postgresDSNEnv names the variable holding the DSN of a throwaway
// PostgreSQL server (hack/postgres/start.sh prints one), as in the store's
// tests.
const postgresDSNEnv = "FLEETWRIGHT_TEST_POSTGRES_DSN"

var replicaSchemaSeq atomic.Int64

// replica is one webhook replica of a test: its own store pool, owners and
// HTTP server, on the test's one PostgreSQL schema.
type replica struct {
	*testEnv
	name    string
	owners  *store.Owners
	admin   *sql.DB
	crashed bool
}

// needPostgres returns the test server's DSN, or skips the test (fails it
// in CI) when there is none. A test whose GitHub fake expects requests
// calls it first: a skip after the expectations would fail them.
func needPostgres(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(postgresDSNEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run hack/postgres/start.sh and export its DSN", postgresDSNEnv)
		}
		t.Skipf("SKIPPING PostgreSQL: %s is not set (run hack/postgres/start.sh)", postgresDSNEnv)
	}
	return dsn
}

// postgresSchema creates a fresh schema and returns a DSN using it, and a
// connection to it for the test's own queries.
func postgresSchema(t testing.TB) (string, *sql.DB) {
	t.Helper()
	dsn := needPostgres(t)
	schema := fmt.Sprintf("wh%d_%d", time.Now().UnixNano(), replicaSchemaSeq.Add(1))
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close()
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), admin
}

// newReplicas starts n replicas on one PostgreSQL schema, each with its
// Owners, and waits until they share the apps.
func newReplicas(t testing.TB, n int, mod func(i int, c *Config)) []*replica {
	t.Helper()
	dsn, admin := postgresSchema(t)
	var rs []*replica
	for i := range n {
		// PostgreSQL keeps 63 bytes of an application name: a long test
		// name is cut, with a hash of the whole kept unique.
		h := fnv.New32a()
		h.Write([]byte(t.Name()))
		name := fmt.Sprintf("%.40s-%08x-r%d", strings.ReplaceAll(t.Name(), "/", "-"), h.Sum32(), i)
		u, _ := url.Parse(dsn)
		q := u.Query()
		q.Set("application_name", name)
		u.RawQuery = q.Encode()
		st, err := store.OpenPostgres(t.Context(), u.String(), store.PostgresOptions{MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		owners, err := st.Owners(store.OwnersOptions{Interval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := owners.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		cfg := Config{
			Store: st, HMACKey: []byte(testKey), APIToken: testToken, Coordinator: owners,
			Backoff:        probe.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond},
			DefaultTimeout: time.Minute, RecheckInterval: -1, StreamPoll: time.Hour,
		}
		if mod != nil {
			mod(i, &cfg)
		}
		srv, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewUnstartedServer(srv.HTTPServer().Handler)
		ts.Config = srv.HTTPServer()
		ts.Start()
		r := &replica{testEnv: &testEnv{t: t, srv: srv, ts: ts, st: st}, name: name, owners: owners, admin: admin}
		t.Cleanup(func() {
			if r.crashed {
				srv.Stop()
				owners.Close()
				return
			}
			srv.BeginShutdown()
			ts.Close()
			srv.Stop()
			owners.Close()
			_ = st.Close()
		})
		rs = append(rs, r)
	}
	waitUntil(t, "the replicas to share the apps", func() bool {
		total := 0
		for _, r := range rs {
			if r.owners.Owned() > (store.OwnerSlots+n-1)/n {
				return false
			}
			total += r.owners.Owned()
		}
		return total == store.OwnerSlots
	})
	return rs
}

// crash ends a replica as kill -9 would: no request reaches it, its
// database sessions end (and with them its advisory locks), and nothing of
// what it held in memory is written or sent afterwards.
func (r *replica) crash(t *testing.T) {
	t.Helper()
	r.crashed = true
	r.ts.CloseClientConnections()
	r.ts.Listener.Close()
	if r.srv.github != nil {
		// Its requests to GitHub die with it.
		r.srv.github.cancel()
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = r.st.Close()
	}()
	for {
		var n int
		if err := r.admin.QueryRowContext(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, r.name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		select {
		case <-closed:
			if n == 0 {
				return
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// owner returns the replica owning an app.
func owner(t *testing.T, rs []*replica, project, app string) *replica {
	t.Helper()
	for _, r := range rs {
		if !r.crashed && r.owners.Owns(layout.AppRef{Project: project, Name: app}, "") {
			return r
		}
	}
	t.Fatalf("no replica owns %s/%s", project, app)
	return nil
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// appEvent is a fixture event of app shop/<app> at rev.
func appEvent(t *testing.T, fixtureName, app, rev string, edits ...func(*eventv1.Event)) []byte {
	return fixture(t, fixtureName, append([]func(*eventv1.Event){withApp("shop", app), withRevision(rev)}, edits...)...)
}

// TestReplicasRolloutSplit: a rollout whose Progressing event reaches one
// replica and whose Succeeded event reaches another moves pending →
// deploying → running once, never back, and GitHub gets one deployment
// per app whose statuses end in success, in order.
func TestReplicasRolloutSplit(t *testing.T) {
	t.Parallel()
	const apps = 12
	needPostgres(t)
	gh := githubtest.New(t, githubtest.WithToken("gh-token"))
	gh.Expect("POST", "/repos/acme/fleet/deployments").Times(apps).Body(func(b map[string]any) error {
		if b["ref"] != commitOf(rev1) || !strings.HasPrefix(fmt.Sprint(b["environment"]), "shop/app") {
			return fmt.Errorf("deployment %v", b)
		}
		return nil
	})
	gh.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Between(apps, 2*apps)
	client := newGitHubClient(t, gh)
	rs := newReplicas(t, 3, func(_ int, c *Config) {
		c.GitHub = &GitHub{Reporter: client, Repo: fleetRepo}
	})
	var wg sync.WaitGroup
	for i := range apps {
		wg.Go(func() {
			app := fmt.Sprintf("app%d", i)
			rs[i%3].mustPost(appEvent(t, "kustomization-progressing", app, rev1), 200)
			if i%2 == 0 {
				// Half the apps see their success 30 ms later, half once
				// they are deploying.
				time.Sleep(30 * time.Millisecond)
			} else {
				rs[(i+1)%3].waitPhase("shop", app, store.PhaseDeploying)
			}
			rs[(i+1)%3].mustPost(appEvent(t, "kustomization-succeeded", app, rev1), 200)
		})
	}
	wg.Wait()
	for i := range apps {
		rs[i%3].waitPhase("shop", fmt.Sprintf("app%d", i), store.PhaseRunning)
	}
	waitUntil(t, "GitHub to hold every success", func() bool {
		ok := 0
		for _, d := range gh.Deployments(fleetRepo.String()) {
			if s, has := d.LastStatus(); has && s.State == "success" {
				ok++
			}
		}
		return ok == apps
	})
	perEnv := map[string]int{}
	for _, d := range gh.Deployments(fleetRepo.String()) {
		perEnv[d.Environment]++
		var states []string
		for _, s := range d.Statuses {
			states = append(states, s.State)
		}
		if got := strings.Join(states, ","); got != "in_progress,success" && got != "success" {
			t.Errorf("%s: statuses %s; want [in_progress,]success", d.Environment, got)
		}
	}
	for env, n := range perEnv {
		if n != 1 {
			t.Errorf("%s has %d GitHub deployments; want 1", env, n)
		}
	}
	for i := range apps {
		walk := strings.Join(rs[0].walk("shop", fmt.Sprintf("app%d", i)), " ")
		if walk != "->pending pending->deploying deploying->running" && walk != "->pending pending->running" {
			t.Errorf("app%d walked %s", i, walk)
		}
	}
}

// newGitHubClient is a client of the fake GitHub.
func newGitHubClient(t *testing.T, gh *githubtest.Server) *github.Client {
	t.Helper()
	c, err := github.New(github.Config{BaseURL: gh.URL, Token: "gh-token", HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// streamIDs reads a replica's stream of phase changes from the start of
// the log and collects the ids it serves.
type streamIDs struct {
	mu  sync.Mutex
	ids []int64
	err error
}

func (r *replica) openStream(t *testing.T) *streamIDs {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.ts.URL+"/api/v1/stream?last_event_id=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %s", resp.Status)
	}
	s := &streamIDs{}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			id, ok := strings.CutPrefix(sc.Text(), "id: ")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(id, 10, 64)
			s.mu.Lock()
			if err != nil {
				s.err = err
			}
			s.ids = append(s.ids, n)
			s.mu.Unlock()
		}
		s.mu.Lock()
		if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
			s.err = err
		}
		s.mu.Unlock()
	}()
	return s
}

func (s *streamIDs) get() ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.ids...), s.err
}

// TestReplicasStreamsMissNothing: the streams of three replicas each serve
// every phase change of 1,000 events spread over the replicas, in order,
// each once.
func TestReplicasStreamsMissNothing(t *testing.T) {
	t.Parallel()
	rs := newReplicas(t, 3, nil)
	var streams []*streamIDs
	for _, r := range rs {
		streams = append(streams, r.openStream(t))
	}
	const apps, workers = 250, 8
	rev2 := "main@sha1:" + strings.Repeat("b", 40)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := w; j < apps; j += workers {
				app := fmt.Sprintf("app%d", j)
				for k, ev := range [][]byte{
					appEvent(t, "kustomization-progressing", app, rev1),
					appEvent(t, "kustomization-succeeded", app, rev1),
					appEvent(t, "kustomization-progressing", app, rev2),
					appEvent(t, "kustomization-succeeded", app, rev2),
				} {
					rs[(j+k)%3].mustPost(ev, 200)
				}
			}
		})
	}
	wg.Wait()
	waitUntil(t, "every app to run its second revision", func() bool {
		as, err := rs[0].st.Apps(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range as {
			if a.Revision == rev2 && a.Phase == store.PhaseRunning {
				n++
			}
		}
		return n == apps
	})
	log, err := rs[1].st.PhaseChanges(t.Context(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	// Each app: its first revision pending, (deploying,) running; its
	// second the same: at least four changes an app.
	if len(log) < 4*apps {
		t.Fatalf("the log holds %d changes; want at least %d", len(log), 4*apps)
	}
	want := make([]int64, len(log))
	for i, c := range log {
		want[i] = c.Seq
	}
	for i, s := range streams {
		waitUntil(t, fmt.Sprintf("replica %d's stream to reach the end of the log", i), func() bool {
			ids, err := s.get()
			if err != nil {
				t.Fatalf("replica %d's stream: %v", i, err)
			}
			return len(ids) > 0 && ids[len(ids)-1] >= want[len(want)-1]
		})
		got, _ := s.get()
		if len(got) != len(want) {
			t.Fatalf("replica %d's stream served %d changes; the log holds %d", i, len(got), len(want))
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("replica %d's stream: change %d is %d; want %d", i, k, got[k], want[k])
			}
		}
	}
}

// countingChecker is a green cluster that counts the checks it runs per app.
type countingChecker struct {
	fakeChecker
	mu   sync.Mutex
	runs map[string]int
}

func (c *countingChecker) Sync(ctx context.Context, t probe.Target) (probe.Check, time.Duration) {
	c.mu.Lock()
	c.runs[t.App.Ref()]++
	c.mu.Unlock()
	return c.fakeChecker.Sync(ctx, t)
}

func (c *countingChecker) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.runs {
		out[k] = v
	}
	return out
}

// TestReplicasChecksRunOnOwner: each app's checks (its rollout and its
// periodic rechecks) run on one replica, its owner, whichever replica got
// its events.
func TestReplicasChecksRunOnOwner(t *testing.T) {
	t.Parallel()
	var checkers []*countingChecker
	rs := newReplicas(t, 3, func(_ int, c *Config) {
		cc := &countingChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed}, runs: map[string]int{}}
		checkers = append(checkers, cc)
		c.Prober = cc
		c.RecheckInterval = 100 * time.Millisecond
	})
	const apps = 15
	for i := range apps {
		app := fmt.Sprintf("app%d", i)
		for k := range 3 {
			rs[(i+k)%3].mustPost(appEvent(t, "kustomization-succeeded", app, rev1, withMessage(fmt.Sprintf("reconciled %d", k))), 200)
		}
	}
	for i := range apps {
		rs[0].waitPhase("shop", fmt.Sprintf("app%d", i), store.PhaseRunning)
	}
	// Several recheck rounds.
	time.Sleep(time.Second)
	total := 0
	for i := range apps {
		app := "shop/" + fmt.Sprintf("app%d", i)
		var on []int
		for k, c := range checkers {
			if n := c.counts()[app]; n > 0 {
				on = append(on, k)
				total += n
			}
		}
		if len(on) != 1 || rs[on[0]] != owner(t, rs, "shop", fmt.Sprintf("app%d", i)) {
			t.Errorf("%s was checked on replicas %v; want its owner alone", app, on)
		}
	}
	if total < 2*apps {
		t.Errorf("%d checks of %d apps: the rechecks did not run", total, apps)
	}
}

// TestReplicasOwnerKilledMidRollout: when the replica running a rollout
// dies, another takes the app over at once (not at its next periodic
// recheck, which this test never reaches), finishes the rollout, and GitHub
// gets its statuses once, on the one deployment.
func TestReplicasOwnerKilledMidRollout(t *testing.T) {
	t.Parallel()
	needPostgres(t)
	gh := githubtest.New(t, githubtest.WithToken("gh-token"))
	gh.Expect("POST", "/repos/acme/fleet/deployments").JSONBody(deploymentBody(commitOf(rev1), "shop/api", rev1))
	gh.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Times(2)
	// Killed after GitHub took a report and before it was marked sent,
	// the owner leaves it queued: its successor reads GitHub back first.
	gh.Expect("GET", "/repos/acme/fleet/deployments").Between(0, 1)
	gh.Expect("GET", "/repos/acme/fleet/deployments/*/statuses").Between(0, 1)
	client := newGitHubClient(t, gh)
	checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StateProgressing, reach: probe.StatePending}}
	rs := newReplicas(t, 3, func(_ int, c *Config) {
		c.GitHub = &GitHub{Reporter: client, Repo: fleetRepo}
		c.Prober = checker
		c.RecheckInterval = time.Hour
	})
	first := owner(t, rs, "shop", "api")
	var other *replica
	for _, r := range rs {
		if r != first {
			other = r
			break
		}
	}
	other.mustPost(fixture(t, "kustomization-progressing"), 200)
	waitUntil(t, "GitHub to hear the rollout is in progress", func() bool {
		ds := gh.Deployments(fleetRepo.String())
		return len(ds) == 1 && len(ds[0].Statuses) == 1
	})
	first.crash(t)
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"})
	other.waitPhase("shop", "api", store.PhaseRunning)
	if next := owner(t, rs, "shop", "api"); next == first {
		t.Fatal("the dead replica still owns the app")
	}
	waitUntil(t, "GitHub to hear of the success", func() bool {
		ds := gh.Deployments(fleetRepo.String())
		return len(ds) == 1 && len(ds[0].Statuses) == 2
	})
	ds := gh.Deployments(fleetRepo.String())
	if s := ds[0].Statuses; s[0].State != "in_progress" || s[1].State != "success" {
		t.Errorf("statuses %+v; want in_progress, success", s)
	}
	if walk := strings.Join(other.walk("shop", "api"), " "); walk != "->pending pending->deploying deploying->running" {
		t.Errorf("walk %s", walk)
	}
}

// TestReplicasConcurrentFirstEvents: the first events of one revision
// reaching two replicas at once are all stored (no 503), in one deployment.
func TestReplicasConcurrentFirstEvents(t *testing.T) {
	t.Parallel()
	rs := newReplicas(t, 2, nil)
	for round := range 5 {
		rev := fmt.Sprintf("main@sha1:%040d", round+1)
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				rs[i%2].mustPost(appEvent(t, "kustomization-progressing", "api", rev, withMessage(fmt.Sprintf("step %d", i))), 200)
			})
		}
		wg.Wait()
		ds, err := rs[0].st.Deployments(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != round+1 || ds[0].Revision != rev {
			t.Fatalf("round %d: %d deployments, newest %s; want %d, newest %s", round, len(ds), ds[0].Revision, round+1, rev)
		}
		evs, err := rs[1].st.Events(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 10*(round+1) {
			t.Fatalf("round %d: %d events stored; want %d", round, len(evs), 10*(round+1))
		}
	}
}

// stallingReporter passes calls to GitHub until stall is set, then holds
// every call until its context ends (a replica stuck talking to GitHub
// when it dies). With after set, the held call reaches GitHub first (a
// replica that dies once GitHub answered).
type stallingReporter struct {
	github.DeploymentReporter
	stall   atomic.Bool
	after   bool
	stalled chan struct{}
	once    sync.Once
}

func (s *stallingReporter) hold(ctx context.Context) error {
	s.once.Do(func() { close(s.stalled) })
	<-ctx.Done()
	return ctx.Err()
}

func (s *stallingReporter) CreateDeployment(ctx context.Context, repo github.Repo, d github.Deployment) (int64, error) {
	if s.stall.Load() {
		if s.after {
			if _, err := s.DeploymentReporter.CreateDeployment(ctx, repo, d); err != nil {
				return 0, err
			}
		}
		return 0, s.hold(ctx)
	}
	return s.DeploymentReporter.CreateDeployment(ctx, repo, d)
}

func (s *stallingReporter) SetDeploymentStatus(ctx context.Context, repo github.Repo, id int64, st github.DeploymentStatus) error {
	if s.stall.Load() {
		if s.after {
			if err := s.DeploymentReporter.SetDeploymentStatus(ctx, repo, id, st); err != nil {
				return err
			}
		}
		return s.hold(ctx)
	}
	return s.DeploymentReporter.SetDeploymentStatus(ctx, repo, id, st)
}

// stallOnStatus stalls only the status calls (the deployment is created).
type stallOnStatus struct{ *stallingReporter }

func (s stallOnStatus) CreateDeployment(ctx context.Context, repo github.Repo, d github.Deployment) (int64, error) {
	return s.DeploymentReporter.CreateDeployment(ctx, repo, d)
}

// TestReplicasOwnerDiesAfterGitHubAnswered: the owner dies after GitHub
// took its request and before the report was marked sent. The new owner
// neither creates a second GitHub deployment nor posts a status twice:
// one deployment, in_progress then success, once each.
func TestReplicasOwnerDiesAfterGitHubAnswered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		onStatus bool
		reads    []string
	}{
		{"after creating the deployment", false, []string{"/repos/acme/fleet/deployments", "/repos/acme/fleet/deployments/*/statuses"}},
		{"after posting a status", true, []string{"/repos/acme/fleet/deployments/*/statuses"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			needPostgres(t)
			gh := githubtest.New(t, githubtest.WithToken("gh-token"))
			gh.Expect("POST", "/repos/acme/fleet/deployments").JSONBody(deploymentBody(commitOf(rev1), "shop/api", rev1))
			gh.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Times(2)
			for _, p := range tc.reads {
				gh.Expect("GET", p)
			}
			client := newGitHubClient(t, gh)
			checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StateProgressing, reach: probe.StatePending}}
			var reporters []*stallingReporter
			rs := newReplicas(t, 3, func(i int, c *Config) {
				r := &stallingReporter{DeploymentReporter: client, after: true, stalled: make(chan struct{})}
				reporters = append(reporters, r)
				var rep github.DeploymentReporter = r
				if tc.onStatus {
					rep = stallOnStatus{r}
				}
				c.GitHub = &GitHub{Reporter: rep, Repo: fleetRepo}
				c.Prober = checker
				c.RecheckInterval = time.Hour
			})
			first := owner(t, rs, "shop", "api")
			for i, r := range rs {
				if r == first {
					reporters[i].stall.Store(true)
					rs[0].mustPost(fixture(t, "kustomization-progressing"), 200)
					select {
					case <-reporters[i].stalled:
					case <-time.After(20 * time.Second):
						t.Fatal("the owner never sent the first GitHub report")
					}
				}
			}
			checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"})
			first.waitPhase("shop", "api", store.PhaseRunning)
			first.crash(t)
			waitUntil(t, "the new owner to send the success", func() bool {
				ds := gh.Deployments(fleetRepo.String())
				return len(ds) >= 1 && len(ds[len(ds)-1].Statuses) >= 2
			})
			ds := gh.Deployments(fleetRepo.String())
			if len(ds) != 1 {
				t.Fatalf("%d GitHub deployments; want 1", len(ds))
			}
			var states []string
			for _, s := range ds[0].Statuses {
				states = append(states, s.State)
			}
			if got := strings.Join(states, " "); got != "in_progress success" {
				t.Errorf("statuses %s; want in_progress success", got)
			}
		})
	}
}

// TestReplicasOutboxSurvivesKill: the owner dies while it sends the
// rollout's first GitHub report, the rollout finished; the reports stay
// queued in the store, and the new owner sends them: one GitHub deployment,
// in_progress then success, once each.
func TestReplicasOutboxSurvivesKill(t *testing.T) {
	t.Parallel()
	needPostgres(t)
	gh := githubtest.New(t, githubtest.WithToken("gh-token"))
	gh.Expect("POST", "/repos/acme/fleet/deployments").JSONBody(deploymentBody(commitOf(rev1), "shop/api", rev1))
	gh.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Times(2)
	// The dead owner's attempt is on record: the new owner asks GitHub
	// whether the deployment and its first status exist before writing.
	gh.Expect("GET", "/repos/acme/fleet/deployments").Query("ref", commitOf(rev1)).Query("environment", "shop/api")
	gh.Expect("GET", "/repos/acme/fleet/deployments/*/statuses")
	client := newGitHubClient(t, gh)
	checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StateProgressing, reach: probe.StatePending}}
	var reporters []*stallingReporter
	rs := newReplicas(t, 3, func(_ int, c *Config) {
		r := &stallingReporter{DeploymentReporter: client, stalled: make(chan struct{})}
		reporters = append(reporters, r)
		c.GitHub = &GitHub{Reporter: r, Repo: fleetRepo}
		c.Prober = checker
		c.RecheckInterval = time.Hour
	})
	first := owner(t, rs, "shop", "api")
	var rep *stallingReporter
	for i, r := range rs {
		if r == first {
			rep = reporters[i]
		}
	}
	rep.stall.Store(true)
	rs[0].mustPost(fixture(t, "kustomization-progressing"), 200)
	select {
	case <-rep.stalled:
	case <-time.After(20 * time.Second):
		t.Fatal("the owner never sent the first GitHub report")
	}
	// The rollout ends while the owner is stuck on its first report: both
	// reports are queued when it dies.
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"})
	first.waitPhase("shop", "api", store.PhaseRunning)
	first.crash(t)
	waitUntil(t, "the new owner to send the queued reports", func() bool {
		ds := gh.Deployments(fleetRepo.String())
		return len(ds) == 1 && len(ds[0].Statuses) == 2
	})
	if s := gh.Deployments(fleetRepo.String())[0].Statuses; s[0].State != "in_progress" || s[1].State != "success" {
		t.Errorf("statuses %+v; want in_progress, success", s)
	}
}
