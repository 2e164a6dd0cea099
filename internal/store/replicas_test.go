package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// forEachShared runs fn against n handles on one database, as n webhook
// replicas hold them: n SQLite handles on one file, and n PostgreSQL pools
// on one schema.
func forEachShared(t *testing.T, n int, fn func(t *testing.T, ss []*SQL)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "history.db")
		var ss []*SQL
		for range n {
			s, err := OpenSQLite(t.Context(), path, SQLiteOptions{BusyTimeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			ss = append(ss, s)
		}
		fn(t, ss)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := testPostgresSchema(t)
		var ss []*SQL
		for range n {
			ss = append(ss, openPostgresAt(t, dsn))
		}
		fn(t, ss)
	})
}

func TestUpdateDeploymentCompareAndSet(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		recs, err := s.RecordEvents(ctx, []Event{ev("k1", "shop", "api", "web", "main@sha1:1", "Progressing", HealthProgressing, t0)}, t0)
		if err != nil {
			t.Fatal(err)
		}
		id := recs[0].DeploymentID
		if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, From: PhasePending, Phase: PhaseDeploying, Message: "rolling", UpdatedAt: t0.Add(time.Second)}); err != nil {
			t.Fatalf("pending → deploying from pending: %v", err)
		}
		// A writer that still believes the deployment pending is refused.
		c, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, From: PhasePending, Phase: PhaseRunning, Message: "stale", UpdatedAt: t0.Add(2 * time.Second)})
		if !errors.Is(err, ErrConflict) || c != nil {
			t.Fatalf("stale transition: change %v, err %v; want ErrConflict", c, err)
		}
		d, err := s.Deployment(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Phase != PhaseDeploying || d.Message != "rolling" {
			t.Fatalf("after a refused transition the deployment is %s %q; want deploying \"rolling\"", d.Phase, d.Message)
		}
		a, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if a.Phase != PhaseDeploying {
			t.Fatalf("app is %s; want deploying", a.Phase)
		}
		log, err := s.PhaseChanges(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 2 || log[1].To != PhaseDeploying {
			t.Fatalf("phase log %+v; want pending, deploying", log)
		}
		if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, From: PhaseDeploying, Phase: PhaseRunning, Message: "green", UpdatedAt: t0.Add(3 * time.Second)}); err != nil {
			t.Fatalf("deploying → running from deploying: %v", err)
		}
	})
}

// TestConcurrentFirstEvents: the first events of one revision stored at
// once by three replicas make one deployment, with every component's
// state, and no error.
func TestConcurrentFirstEvents(t *testing.T) {
	t.Parallel()
	forEachShared(t, 3, func(t *testing.T, ss []*SQL) {
		ctx := t.Context()
		const rounds, perRound = 5, 12
		for round := range rounds {
			rev := fmt.Sprintf("main@sha1:%d", round)
			var wg sync.WaitGroup
			errs := make(chan error, perRound)
			for i := range perRound {
				wg.Go(func() {
					comp := fmt.Sprintf("c%02d", i)
					_, err := ss[i%len(ss)].RecordEvents(ctx, []Event{ev(fmt.Sprintf("%d-%d", round, i), "shop", "api", comp, rev, "Progressing", HealthProgressing, t0)}, t0)
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			ds, err := ss[0].Deployments(ctx, layout.AppRef{Project: "shop", Name: "api"}, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != round+1 {
				t.Fatalf("round %d: %d deployments; want %d", round, len(ds), round+1)
			}
			if len(ds[0].Components) != perRound {
				t.Fatalf("round %d: deployment has %d components; want %d: %+v", round, len(ds[0].Components), perRound, ds[0].Components)
			}
			open := 0
			for _, d := range ds {
				if !d.Finished() {
					open++
				}
			}
			if open != 1 {
				t.Fatalf("round %d: %d unfinished deployments; want 1", round, open)
			}
		}
	})
}

// TestBatchesAcrossAppsInAnyOrder: batches naming the same apps in
// opposite orders, written at once on three replicas, all commit and lose
// no component state.
func TestBatchesAcrossAppsInAnyOrder(t *testing.T) {
	t.Parallel()
	forEachShared(t, 3, func(t *testing.T, ss []*SQL) {
		ctx := t.Context()
		const apps, writers, batches = 6, 6, 8
		var wg sync.WaitGroup
		errs := make(chan error, writers*batches)
		for w := range writers {
			wg.Go(func() {
				for b := range batches {
					var evs []Event
					for i := range apps {
						a := i
						if w%2 == 1 {
							a = apps - 1 - i
						}
						evs = append(evs, ev(fmt.Sprintf("w%d-b%d-a%d", w, b, a), "shop", fmt.Sprintf("app%d", a),
							fmt.Sprintf("w%d", w), "main@sha1:1", "Progressing", HealthProgressing, t0.Add(time.Duration(b)*time.Second)))
					}
					_, err := ss[w%len(ss)].RecordEvents(ctx, evs, t0)
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for a := range apps {
			ds, err := ss[0].Deployments(ctx, layout.AppRef{Project: "shop", Name: fmt.Sprintf("app%d", a)}, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 || len(ds[0].Components) != writers {
				t.Fatalf("app%d: %d deployments, components %+v; want 1 deployment with %d components", a, len(ds), ds, writers)
			}
		}
	})
}

// TestPhaseLogCannotSkip: a reader polling the phase log while three
// replicas write phase changes at once sees every change, each once.
func TestPhaseLogCannotSkip(t *testing.T) {
	t.Parallel()
	forEachShared(t, 3, func(t *testing.T, ss []*SQL) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		const writers, apps, steps = 6, 4, 40
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				s := ss[w%len(ss)]
				for step := range steps {
					app := fmt.Sprintf("w%d-app%d", w, step%apps)
					recs, err := s.RecordEvents(ctx, []Event{ev(fmt.Sprintf("w%d-%d", w, step), "shop", app, "web",
						fmt.Sprintf("main@sha1:%d", step/apps), "Progressing", HealthProgressing, t0)}, t0)
					if err != nil {
						errs <- err
						return
					}
					for _, p := range []Phase{PhaseDeploying, PhaseRunning} {
						if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: recs[0].DeploymentID, Phase: p, UpdatedAt: t0}); err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
		var seen []int64
		done := make(chan struct{})
		var readErr error
		go func() {
			defer close(done)
			var last int64
			for {
				// Writers done before this read: it is the last one needed.
				over := ctx.Err() != nil
				cs, err := ss[0].PhaseChanges(t.Context(), last, 500)
				if err != nil {
					readErr = err
					return
				}
				for _, c := range cs {
					seen = append(seen, c.Seq)
					last = c.Seq
				}
				if len(cs) == 0 && over {
					return
				}
			}
		}()
		wg.Wait()
		cancel()
		<-done
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if readErr != nil {
			t.Fatal(readErr)
		}
		all, err := ss[1].PhaseChanges(t.Context(), 0, 100000)
		if err != nil {
			t.Fatal(err)
		}
		if want := writers * steps * 3; len(all) != want {
			t.Fatalf("the log holds %d changes; want %d", len(all), want)
		}
		var allSeqs []int64
		for _, c := range all {
			allSeqs = append(allSeqs, c.Seq)
		}
		if !slices.Equal(seen, allSeqs) {
			missed := 0
			for _, q := range allSeqs {
				if _, ok := slices.BinarySearch(seen, q); !ok {
					missed++
				}
			}
			t.Fatalf("the reader saw %d changes of %d: it skipped %d", len(seen), len(allSeqs), missed)
		}
	})
}

// ownersOf starts the coordination of n replicas on one PostgreSQL schema.
func ownersOf(t *testing.T, n int) ([]*SQL, []*Owners) {
	t.Helper()
	dsn := testPostgresSchema(t)
	var (
		ss     []*SQL
		owners []*Owners
	)
	for range n {
		s := openPostgresAt(t, dsn)
		o, err := s.Owners(OwnersOptions{Interval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(o.Close)
		ss, owners = append(ss, s), append(owners, o)
	}
	return ss, owners
}

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// balanced reports whether the live replicas own every slot between them,
// none more than its share.
func balanced(live []*Owners) bool {
	share := (OwnerSlots + len(live) - 1) / len(live)
	total := 0
	for _, o := range live {
		if o.Owned() > share {
			return false
		}
		total += o.Owned()
	}
	return total == OwnerSlots
}

func TestOwnersShareTheApps(t *testing.T) {
	t.Parallel()
	ss, owners := ownersOf(t, 3)
	waitFor(t, "three replicas to share the slots", func() bool { return balanced(owners) })
	for i := range 200 {
		app := fmt.Sprintf("app%d", i)
		n := 0
		for _, o := range owners {
			if o.Owns(layout.AppRef{Project: "shop", Name: app}, "") {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("shop/%s has %d owners; want 1", app, n)
		}
	}

	// Notices reach every replica; a committed phase change wakes them.
	if err := owners[0].Notify(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	for i, o := range owners {
		select {
		case m := <-o.Notices():
			if m != "hello" {
				t.Fatalf("replica %d got %q", i, m)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("replica %d got no notice", i)
		}
	}
	for _, o := range owners {
		select {
		case <-o.Logged():
		default:
		}
	}
	if _, err := ss[2].RecordEvents(t.Context(), []Event{ev("k", "shop", "api", "web", "main@sha1:1", "Progressing", HealthProgressing, t0)}, t0); err != nil {
		t.Fatal(err)
	}
	for i, o := range owners {
		select {
		case <-o.Logged():
		case <-time.After(5 * time.Second):
			t.Fatalf("replica %d was not woken by the phase change", i)
		}
	}

	// A replica that shuts down gives its apps up at once.
	owners[2].Close()
	waitFor(t, "two replicas to take the third's slots", func() bool { return balanced(owners[:2]) })

	// One that dies loses them with its connection: its rounds stop and
	// the server ends its session, as when its process is killed.
	dead := owners[1]
	dead.cancel()
	dead.wg.Wait()
	var pid int
	if err := dead.conn.QueryRowContext(t.Context(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := ss[0].db.ExecContext(t.Context(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the last replica to take the dead one's slots", func() bool { return owners[0].Owned() == OwnerSlots })
}

// TestPruneOnOneReplica: replicas pruning one database at once delete each
// row once between them and report only the rows they deleted; while one
// prunes, the others skip their turn.
func TestPruneOnOneReplica(t *testing.T) {
	t.Parallel()
	forEachShared(t, 3, func(t *testing.T, ss []*SQL) {
		ctx := t.Context()
		const apps, revs = 10, 30
		for a := range apps {
			var evs []Event
			for r := range revs {
				evs = append(evs, ev(fmt.Sprintf("a%d-r%d", a, r), "shop", fmt.Sprintf("app%d", a), "web",
					fmt.Sprintf("main@sha1:%d", r), "Progressing", HealthProgressing, t0))
			}
			if _, err := ss[0].RecordEvents(ctx, evs, t0); err != nil {
				t.Fatal(err)
			}
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			total   Pruned
			skipped int
		)
		for _, s := range ss {
			wg.Go(func() {
				p, err := s.Prune(ctx, Retention{KeepPerApp: 5}, t0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				total.Deployments += p.Deployments
				total.Events += p.Events
				if p.Skipped {
					skipped++
				}
			})
		}
		wg.Wait()
		if want := int64(apps * (revs - 5)); total.Deployments != want || total.Events != want {
			t.Errorf("the replicas report %d deployments and %d events deleted; %d of each were", total.Deployments, total.Events, want)
		}
		var left int
		if err := ss[0].db.QueryRowContext(ctx, `SELECT count(*) FROM deployments`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != apps*5 {
			t.Errorf("%d deployments left; want %d", left, apps*5)
		}
		if ss[0].Dialect() != "postgres" {
			return
		}
		// While one replica holds the prune's lock, another skips.
		c, err := ss[0].db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		key := int64(ss[0].class)<<32 | pruneLockKey
		if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
			t.Fatal(err)
		}
		p, err := ss[1].Prune(ctx, Retention{KeepPerApp: 1}, t0)
		if err != nil || !p.Skipped || p.Deployments != 0 {
			t.Errorf("prune while another replica prunes: %+v, %v; want skipped", p, err)
		}
		if _, err := c.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
			t.Fatal(err)
		}
		p, err = ss[1].Prune(ctx, Retention{KeepPerApp: 1}, t0)
		if err != nil || p.Skipped || p.Deployments != apps*4 {
			t.Errorf("prune after the other replica: %+v, %v; want %d deployments deleted", p, err, apps*4)
		}
	})
}

// TestGitHubOutbox: a transition queues its GitHub report in its own
// transaction; replicas sending at once send each report once, each app's
// in order.
func TestGitHubOutbox(t *testing.T) {
	t.Parallel()
	forEachShared(t, 3, func(t *testing.T, ss []*SQL) {
		ctx := t.Context()
		const apps = 8
		var ids []int64
		for a := range apps {
			recs, err := ss[0].RecordEvents(ctx, []Event{ev(fmt.Sprintf("k%d", a), "shop", fmt.Sprintf("app%d", a), "web", "main@sha1:1", "Progressing", HealthProgressing, t0)}, t0)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, recs[0].DeploymentID)
		}
		for _, id := range ids {
			for _, u := range []DeploymentUpdate{
				{ID: id, Phase: PhaseDeploying, Message: "1", Report: ReportOnChange},
				{ID: id, Phase: PhaseDeploying, Message: "no change, no report", Report: ReportOnChange},
				{ID: id, Phase: PhaseDeploying, Message: "2", Report: ReportAlways, Restate: true},
				{ID: id, Phase: PhaseRunning, Message: "3", LiveURL: "https://x.test/", Report: ReportOnChange},
				{ID: id, Phase: PhaseRunning, Message: "not reported"},
			} {
				u.UpdatedAt = t0
				if _, err := ss[1].UpdateDeployment(ctx, u); err != nil {
					t.Fatal(err)
				}
			}
		}
		var (
			mu   sync.Mutex
			sent = map[int64][]string{}
			wg   sync.WaitGroup
		)
		senders := ss
		if ss[0].Dialect() == "sqlite" {
			// SQLite is one replica's store: one sender.
			senders = ss[:1]
		}
		for _, s := range senders {
			wg.Go(func() {
				for {
					ok, err := s.SendOutbox(ctx, nil, func(e OutboxEntry) {
						mu.Lock()
						sent[e.DeploymentID] = append(sent[e.DeploymentID], fmt.Sprintf("%s %s %s %v", e.Phase, e.Message, e.LiveURL, e.Restate))
						mu.Unlock()
						time.Sleep(time.Millisecond)
					})
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						return
					}
				}
			})
		}
		wg.Wait()
		want := []string{"deploying 1  false", "deploying 2  true", "running 3 https://x.test/ false"}
		for _, id := range ids {
			if !slices.Equal(sent[id], want) && len(senders) == 1 {
				t.Errorf("deployment %d: sent %q; want %q", id, sent[id], want)
			}
			got := slices.Clone(sent[id])
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("deployment %d: sent %q; want each of %q once", id, sent[id], want)
			}
		}
		// Only the slots asked for.
		if _, err := ss[1].UpdateDeployment(ctx, DeploymentUpdate{ID: ids[0], Phase: PhaseDegraded, Report: ReportOnChange, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if ss[0].Dialect() == "postgres" {
			other := (SlotOf(layout.AppRef{Project: "shop", Name: "app0"}, "") + 1) % OwnerSlots
			if ok, err := ss[2].SendOutbox(ctx, []int{other}, func(OutboxEntry) { t.Error("sent another slot's report") }); err != nil || ok {
				t.Fatalf("SendOutbox of another slot: %v, %v", ok, err)
			}
		}
		if ok, err := ss[2].SendOutbox(ctx, []int{SlotOf(layout.AppRef{Project: "shop", Name: "app0"}, "")}, func(e OutboxEntry) {
			if e.Phase != PhaseDegraded {
				t.Errorf("sent %+v", e)
			}
		}); err != nil || !ok {
			t.Fatalf("SendOutbox: %v, %v", ok, err)
		}
	})
}

// TestDeadlockRetried: two replicas storing the same ignored events in
// opposite orders deadlock in PostgreSQL; the transaction PostgreSQL
// aborts is run again, logged, and both batches are stored.
func TestDeadlockRetried(t *testing.T) {
	t.Parallel()
	dsn := testPostgresSchema(t)
	var logged strings.Builder
	var logMu sync.Mutex
	open := func() *SQL {
		s, err := OpenPostgres(t.Context(), dsn, PostgresOptions{MaxConns: 4,
			Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logged}, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := open(), open()
	ignored := func(key string) Event {
		return Event{DedupeKey: key, Kind: "GitRepository", Namespace: "flux-system", Name: "fleet", Reason: "NewArtifact", ReceivedAt: t0, EventTime: t0}
	}
	for round := 0; round < 50 && a.Retries()+b.Retries() == 0; round++ {
		var keys []Event
		for i := range 20 {
			keys = append(keys, ignored(fmt.Sprintf("r%d-%d", round, i)))
		}
		rev := slices.Clone(keys)
		slices.Reverse(rev)
		var wg sync.WaitGroup
		for _, w := range []struct {
			s   *SQL
			evs []Event
		}{{a, keys}, {b, rev}} {
			wg.Go(func() {
				if _, err := w.s.RecordEvents(t.Context(), w.evs, t0); err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		wg.Wait()
	}
	if a.Retries()+b.Retries() == 0 {
		t.Skip("no deadlock happened in 50 rounds")
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logged.String(), "retrying a transaction") || !strings.Contains(logged.String(), "40P01") {
		t.Errorf("the retry was not logged: %s", logged.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
