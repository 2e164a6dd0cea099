package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/jackc/pgx/v5/pgconn"
)

// dialect holds what differs between SQLite and PostgreSQL.
type dialect struct {
	name string
	// dollar makes placeholders $1, $2, … instead of ?.
	dollar bool
	// pk is the column type of an auto-increment primary key.
	pk string
	// lock runs first in the migration transaction.
	lock string
	// advisory: the database has advisory locks (PostgreSQL). Writes then
	// lock the apps they touch, in one order, and the phase log's tail
	// (see lockApps and lockLog); SQLite has one writer at a time.
	advisory bool
	// arrays: the database takes arrays as parameters (PostgreSQL). A
	// batch of events then reads its deployments, inserts its events and
	// writes its deployments' component states in one statement each,
	// since every statement is a round trip to the server; SQLite runs in
	// the process and takes one statement per row.
	arrays bool
	// cached: the driver keeps each statement prepared on its connection
	// (pgx), so preparing one per transaction would only add two round
	// trips (prepare and deallocate).
	cached bool
}

// sqlStore implements Store on database/sql.
type sqlStore struct {
	db *sql.DB
	d  dialect
	// wmu, when set, serialises this process's write transactions: SQLite
	// allows one writer, and waiting on a mutex is far cheaper than its
	// busy-retry sleeps.
	wmu *sync.Mutex
	// log receives the retried deadlocks and serialization failures.
	log *slog.Logger
	// retries counts them.
	retries atomic.Int64
	// class scopes PostgreSQL's advisory locks and channels to the
	// schema (see Owners).
	class int32
}

func (s *sqlStore) lockWrites() func() {
	if s.wmu == nil {
		return func() {}
	}
	s.wmu.Lock()
	return s.wmu.Unlock
}

// txStmts prepares each statement once per transaction.
type txStmts struct {
	ctx   context.Context
	tx    *sql.Tx
	s     *sqlStore
	cache map[string]*sql.Stmt
	// changes are the phase changes the transaction appends, inserted
	// last (see flushChanges).
	changes []PhaseChange
	// deps holds the component states of the deployments the batch's
	// events joined, merged in memory and written once at its end
	// (writeComponents); byRev and latest find them again: by project,
	// app and revision, and the app's current deployment. The app's lock
	// keeps them true for the whole transaction.
	deps   map[int64]*batchDeployment
	byRev  map[string]int64
	latest map[string]int64
}

// batchDeployment is what a batch changes of one deployment.
type batchDeployment struct {
	comps []ComponentState
	// spec is the first spec revision the batch's events carried.
	spec  string
	dirty bool
}

func (t *txStmts) stmt(query string) (*sql.Stmt, error) {
	if st, ok := t.cache[query]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(t.ctx, t.s.q(query))
	if err != nil {
		return nil, fmt.Errorf("preparing statement: %w", err)
	}
	t.cache[query] = st
	return st, nil
}

func (t *txStmts) queryRow(query string, args ...any) *sql.Row {
	if t.s.d.cached {
		return t.tx.QueryRowContext(t.ctx, t.s.q(query), args...)
	}
	st, err := t.stmt(query)
	if err != nil {
		// A Row carrying the error: QueryRowContext on the tx reports it.
		return t.tx.QueryRowContext(t.ctx, t.s.q(query), args...)
	}
	return st.QueryRowContext(t.ctx, args...)
}

func (t *txStmts) exec(query string, args ...any) error {
	if t.s.d.cached {
		_, err := t.tx.ExecContext(t.ctx, t.s.q(query), args...)
		return err
	}
	st, err := t.stmt(query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(t.ctx, args...)
	return err
}

func (t *txStmts) close() {
	for _, st := range t.cache {
		_ = st.Close()
	}
}

// q rewrites ? placeholders for the dialect.
func (s *sqlStore) q(query string) string {
	if !s.d.dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func ts(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromTS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func (s *sqlStore) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

func (s *sqlStore) Close() error { return s.db.Close() }

func (s *sqlStore) RecordEvents(ctx context.Context, events []Event, now time.Time) ([]Recorded, error) {
	defer s.lockWrites()()
	var out []Recorded
	err := s.retry(ctx, "storing events", func() (err error) {
		out, err = s.recordEvents(ctx, events, now)
		return err
	})
	return out, err
}

func (s *sqlStore) recordEvents(ctx context.Context, events []Event, now time.Time) (_ []Recorded, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	ts := &txStmts{ctx: ctx, tx: tx, s: s, cache: map[string]*sql.Stmt{},
		deps: map[int64]*batchDeployment{}, byRev: map[string]int64{}, latest: map[string]int64{}}
	defer ts.close()
	bs := make([]batchEvent, len(events))
	var apps []int64
	for i, e := range events {
		bs[i] = newBatchEvent(e)
		if bs[i].status == EventApplied {
			apps = append(apps, appLockKey(bs[i].e.App, bs[i].e.Environment))
		}
	}
	if err := s.lockApps(ctx, tx, apps...); err != nil {
		return nil, err
	}
	if err := s.readDeployments(ts, bs); err != nil {
		return nil, err
	}
	for i := range bs {
		b := &bs[i]
		if b.status != EventApplied {
			continue
		}
		// A repeated event's deployment already exists, so finding (or
		// creating) it before the dedupe check creates nothing extra.
		if b.r.DeploymentID, b.dep, b.r.NewDeployment, err = s.batchDeployment(ts, b.e, now); err != nil {
			return nil, fmt.Errorf("event %s/%s/%s %s: %w", b.e.Kind, b.e.Namespace, b.e.Name, b.e.Reason, err)
		}
	}
	if err := s.insertEvents(ts, bs); err != nil {
		return nil, err
	}
	out := make([]Recorded, len(bs))
	for i := range bs {
		out[i] = bs[i].merge()
	}
	if err := s.writeComponents(ts, now); err != nil {
		return nil, err
	}
	if _, err := s.flushChanges(ctx, tx, ts.changes); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return out, nil
}

// Lock keys of PostgreSQL's transaction advisory locks. An app's key comes
// from appLockKey; logLockKey guards the phase log's tail.
const logLockKey = 0x666c6565747700 // "fleetw\0"

// appLockKey is the advisory lock key of one app in one environment (a
// 64-bit FNV-1a hash of AppKey; two apps that collide only wait on each
// other).
func appLockKey(app layout.AppRef, env string) int64 {
	h := fnv.New64a()
	h.Write([]byte("app\x00" + AppKey(app, env)))
	return int64(h.Sum64())
}

// AppKey names an app in an environment: "project/app", and
// "project/app@environment" in an environment. Names and environments are
// DNS labels, so no two differ only in where the separators fall.
func AppKey(app layout.AppRef, env string) string {
	ref := app.Ref()
	if env == "" {
		return ref
	}
	return ref + "@" + env
}

// lockApps takes the transaction's locks of the given apps, in ascending
// key order, which every writer follows: the writes of one app (its events,
// new deployments and phase transitions) happen one after the other, and
// two transactions cannot wait on each other's apps.
func (s *sqlStore) lockApps(ctx context.Context, tx *sql.Tx, keys ...int64) error {
	if !s.d.advisory || len(keys) == 0 {
		return nil
	}
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	// One round trip: unnest yields the keys in the array's order.
	if _, err := tx.ExecContext(ctx, `SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS u(k)`, keys); err != nil {
		return fmt.Errorf("locking apps: %w", err)
	}
	return nil
}

// flushChanges appends the transaction's phase changes to the log. On
// PostgreSQL it first takes the log's lock, held until the commit: the
// writers of phase changes take their sequence numbers and commit one
// after the other, so a reader that saw number n has seen every number
// below it (a stream cannot skip a change that commits late). It returns
// the sequence numbers in order.
func (s *sqlStore) flushChanges(ctx context.Context, tx *sql.Tx, cs []PhaseChange) ([]int64, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	if s.d.advisory {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, logLockKey)); err != nil {
			return nil, fmt.Errorf("locking the phase log: %w", err)
		}
		// Delivered at the commit: every replica's streams wake up.
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, '')`, logChannel(s.class)); err != nil {
			return nil, fmt.Errorf("notifying the phase log: %w", err)
		}
	}
	seqs := make([]int64, len(cs))
	for i, c := range cs {
		var err error
		if seqs[i], err = s.insertChange(ctx, tx, c); err != nil {
			return nil, err
		}
	}
	return seqs, nil
}

// maxAttempts bounds the attempts of a transaction that PostgreSQL aborted
// for a deadlock or a serialization failure.
const maxAttempts = 5

// retry runs fn again when it failed on a deadlock or a serialization
// failure, logging each: such a conflict is never the caller's error.
func (s *sqlStore) retry(ctx context.Context, what string, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		s.retries.Add(1)
		if s.log != nil {
			s.log.Warn("retrying a transaction", "what", what, "attempt", attempt, "err", err)
		}
		wait := time.Duration(attempt) * time.Duration(1+rand.IntN(10)) * time.Millisecond
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// retryable reports a deadlock or serialization failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// Retries returns how many transactions were run again after a deadlock
// or a serialization failure.
func (s *sqlStore) Retries() int64 { return s.retries.Load() }

func rollback(tx *sql.Tx) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

// batchKeys are the keys of the batch's memory of deployments: an app in
// an environment (its current deployment, txStmts.latest) and, with a
// revision, its deployment of that revision (txStmts.byRev).
func batchKeys(app layout.AppRef, env, rev string) (appKey, revKey string) {
	appKey = app.Project + "\x00" + app.Name + "\x00" + env
	return appKey, appKey + "\x00" + rev
}

// batchDeployment finds (or creates) e's deployment, from the batch's
// memory when an earlier event of the batch joined it.
func (s *sqlStore) batchDeployment(t *txStmts, e Event, now time.Time) (int64, *batchDeployment, bool, error) {
	app, rev := batchKeys(e.App, e.Environment, e.Revision)
	id, ok := t.byRev[rev]
	if e.JoinLatest {
		id, ok = t.latest[app]
	}
	if ok {
		return id, t.deps[id], false, nil
	}
	id, comps, created, err := s.joinDeployment(t, e, now)
	if err != nil {
		return 0, nil, false, err
	}
	d := t.deps[id]
	if d == nil {
		d = &batchDeployment{comps: comps}
		t.deps[id] = d
	}
	switch {
	case created:
		t.byRev[rev], t.latest[app] = id, id
	case e.JoinLatest:
		t.latest[app] = id
	default:
		t.byRev[rev] = id
	}
	return id, d, created, nil
}

// mergeComponent sets the state of the event's component unless a newer event
// already did.
func mergeComponent(comps []ComponentState, e Event) []ComponentState {
	name := e.Component
	if name == "" {
		name = e.Name
	}
	st := ComponentState{
		Name: name, Kind: e.Kind, Health: e.Health, Reason: e.Reason,
		Message: e.Message, Terminal: e.Terminal, UpdatedAt: e.EventTime.UTC(),
	}
	i := slices.IndexFunc(comps, func(c ComponentState) bool { return c.Name == name && c.Kind == e.Kind })
	switch {
	case i < 0:
		comps = append(comps, st)
	case !st.UpdatedAt.Before(comps[i].UpdatedAt):
		comps[i] = st
	}
	slices.SortFunc(comps, func(a, b ComponentState) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return comps
}

func (s *sqlStore) joinDeployment(tx *txStmts, e Event, now time.Time) (int64, []ComponentState, bool, error) {
	var (
		id    int64
		comps string
		err   error
	)
	if e.JoinLatest {
		err = tx.queryRow(`SELECT d.id, d.components FROM apps a JOIN deployments d ON d.id = a.deployment_id
			WHERE a.project = ? AND a.name = ? AND a.environment = ?`, e.App.Project, e.App.Name, e.Environment).Scan(&id, &comps)
	} else {
		err = tx.queryRow(`SELECT id, components FROM deployments WHERE project = ? AND app = ? AND environment = ? AND revision = ?`,
			e.App.Project, e.App.Name, e.Environment, e.Revision).Scan(&id, &comps)
	}
	switch {
	case err == nil:
		var cs []ComponentState
		if err := json.Unmarshal([]byte(comps), &cs); err != nil {
			return 0, nil, false, fmt.Errorf("decoding components of deployment %d: %w", id, err)
		}
		return id, cs, false, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, nil, false, fmt.Errorf("finding deployment: %w", err)
	}
	if e.JoinLatest {
		// No deployment yet: the event's own revision keys one, unless it exists.
		err = tx.queryRow(`SELECT id, components FROM deployments WHERE project = ? AND app = ? AND environment = ? AND revision = ?`,
			e.App.Project, e.App.Name, e.Environment, e.Revision).Scan(&id, &comps)
		if err == nil {
			var cs []ComponentState
			if err := json.Unmarshal([]byte(comps), &cs); err != nil {
				return 0, nil, false, fmt.Errorf("decoding components of deployment %d: %w", id, err)
			}
			return id, cs, false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, nil, false, fmt.Errorf("finding deployment: %w", err)
		}
	}
	id, created, err := s.createDeployment(tx, e, now)
	if err != nil || created {
		return id, nil, created, err
	}
	// Another writer created it first: join it.
	err = tx.queryRow(`SELECT components FROM deployments WHERE id = ?`, id).Scan(&comps)
	if err != nil {
		return 0, nil, false, fmt.Errorf("reading deployment %d: %w", id, err)
	}
	var cs []ComponentState
	if err := json.Unmarshal([]byte(comps), &cs); err != nil {
		return 0, nil, false, fmt.Errorf("decoding components of deployment %d: %w", id, err)
	}
	return id, cs, false, nil
}

// createDeployment creates the deployment of e's app and revision; when
// it exists already (created by a writer that did not hold the app's lock)
// it returns that one's id and created false.
func (s *sqlStore) createDeployment(t *txStmts, e Event, now time.Time) (id int64, created bool, err error) {
	ctx, tx := t.ctx, t.tx
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO deployments
		(project, app, environment, revision, spec_revision, started_at, finished_at, updated_at, phase, message,
		 components, checks, live_url, timeout_ms, github_id, github_state, superseded_by)
		VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, '', '[]', '', '', 0, 0, '', 0)
		ON CONFLICT (project, app, environment, revision) DO NOTHING RETURNING id`),
		e.App.Project, e.App.Name, e.Environment, e.Revision, e.SpecRevision, ts(now), ts(now), string(PhasePending)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, s.q(`SELECT id FROM deployments WHERE project = ? AND app = ? AND environment = ? AND revision = ?`),
			e.App.Project, e.App.Name, e.Environment, e.Revision).Scan(&id)
		if err != nil {
			return 0, false, fmt.Errorf("reading the deployment created meanwhile: %w", err)
		}
		return id, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("creating deployment: %w", err)
	}
	// Older deployments end here; a finished one keeps its end time and message.
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE deployments SET
		message = CASE WHEN finished_at = 0 THEN ? ELSE message END,
		finished_at = CASE WHEN finished_at = 0 THEN ? ELSE finished_at END,
		updated_at = ?, superseded_by = ?
		WHERE project = ? AND app = ? AND environment = ? AND superseded_by = 0 AND id < ?`),
		"superseded by revision "+e.Revision, ts(now), ts(now), id, e.App.Project, e.App.Name, e.Environment, id); err != nil {
		return 0, false, fmt.Errorf("superseding deployments: %w", err)
	}
	var from string
	err = tx.QueryRowContext(ctx, s.q(`SELECT phase FROM apps WHERE project = ? AND name = ? AND environment = ?`),
		e.App.Project, e.App.Name, e.Environment).Scan(&from)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("reading app: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO apps
		(project, name, environment, phase, message, deployment_id, revision, spec_revision, live_url, updated_at)
		VALUES (?, ?, ?, ?, '', ?, ?, ?, '', ?)
		ON CONFLICT (project, name, environment) DO UPDATE SET phase = excluded.phase, message = excluded.message,
		deployment_id = excluded.deployment_id, revision = excluded.revision,
		spec_revision = excluded.spec_revision, updated_at = excluded.updated_at`),
		e.App.Project, e.App.Name, e.Environment, string(PhasePending), id, e.Revision, e.SpecRevision, ts(now)); err != nil {
		return 0, false, fmt.Errorf("updating app: %w", err)
	}
	t.changes = append(t.changes, PhaseChange{
		App: e.App, Environment: e.Environment, DeploymentID: id, Revision: e.Revision,
		From: Phase(from), To: PhasePending, Message: "revision " + e.Revision + " received", At: now,
	})
	return id, true, nil
}

func (s *sqlStore) insertChange(ctx context.Context, tx *sql.Tx, c PhaseChange) (int64, error) {
	var seq int64
	if err := tx.QueryRowContext(ctx, s.q(`INSERT INTO phase_changes
		(project, app, environment, deployment_id, revision, from_phase, to_phase, message, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`),
		c.App.Project, c.App.Name, c.Environment, c.DeploymentID, c.Revision, string(c.From), string(c.To), c.Message, ts(c.At)).Scan(&seq); err != nil {
		return 0, fmt.Errorf("recording phase change: %w", err)
	}
	return seq, nil
}

func (s *sqlStore) UpdateDeployment(ctx context.Context, u DeploymentUpdate) (*PhaseChange, error) {
	defer s.lockWrites()()
	var change *PhaseChange
	err := s.retry(ctx, "updating a deployment", func() (err error) {
		change, err = s.updateDeployment(ctx, u)
		return err
	})
	return change, err
}

func (s *sqlStore) updateDeployment(ctx context.Context, u DeploymentUpdate) (_ *PhaseChange, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	var (
		app                 layout.AppRef
		env, rev, phase     string
		current, superseded int64
	)
	if s.d.advisory {
		// The app's lock first, as every writer takes it (lockApps).
		err = tx.QueryRowContext(ctx, s.q(`SELECT project, app, environment FROM deployments WHERE id = ?`), u.ID).Scan(&app.Project, &app.Name, &env)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("deployment %d: %w", u.ID, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("reading deployment %d: %w", u.ID, err)
		}
		if err := s.lockApps(ctx, tx, appLockKey(app, env)); err != nil {
			return nil, err
		}
	}
	err = tx.QueryRowContext(ctx, s.q(`SELECT d.project, d.app, d.environment, d.revision, d.phase, COALESCE(a.deployment_id, 0), d.superseded_by
		FROM deployments d LEFT JOIN apps a ON a.project = d.project AND a.name = d.app AND a.environment = d.environment WHERE d.id = ?`), u.ID).
		Scan(&app.Project, &app.Name, &env, &rev, &phase, &current, &superseded)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("deployment %d: %w", u.ID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading deployment %d: %w", u.ID, err)
	}
	if superseded != 0 {
		// A superseded deployment's history is final.
		return nil, tx.Commit()
	}
	if u.From != "" && Phase(phase) != u.From {
		return nil, fmt.Errorf("deployment %d is %s, not %s: %w", u.ID, phase, u.From, ErrConflict)
	}
	u.Message, u.LiveURL, u.SpecRevision = cleanText(u.Message), cleanText(u.LiveURL), cleanText(u.SpecRevision)
	spec, args := "CASE WHEN ? <> '' THEN ? ELSE spec_revision END", []any{string(u.Phase), u.Message, string(u.Checks), u.LiveURL,
		u.Timeout.Milliseconds(), ts(u.FinishedAt), ts(u.UpdatedAt), u.SpecRevision, u.SpecRevision, u.ID}
	if u.NoSpecRevision {
		spec, args = "''", slices.Delete(args, 7, 9)
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE deployments SET phase = ?, message = ?, checks = ?, live_url = ?, timeout_ms = ?,
		finished_at = ?, updated_at = ?, spec_revision = `+spec+` WHERE id = ?`), args...); err != nil {
		return nil, fmt.Errorf("updating deployment %d: %w", u.ID, err)
	}
	if current == u.ID {
		// The app keeps the last URL that answered, unless it was deleted.
		live, args := "CASE WHEN ? <> '' THEN ? ELSE live_url END", []any{string(u.Phase), u.Message, u.LiveURL, u.LiveURL}
		if u.Phase == PhaseDeleted {
			live, args = "''", args[:2]
		}
		args = append(args, ts(u.UpdatedAt), u.ID, app.Project, app.Name, env)
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE apps SET phase = ?, message = ?, live_url = `+live+`, updated_at = ?,
			spec_revision = (SELECT spec_revision FROM deployments WHERE id = ?) WHERE project = ? AND name = ? AND environment = ?`), args...); err != nil {
			return nil, fmt.Errorf("updating app %s: %w", app.Ref(), err)
		}
	}
	var change *PhaseChange
	if Phase(phase) != u.Phase {
		change = &PhaseChange{
			App: app, Environment: env, DeploymentID: u.ID, Revision: rev,
			From: Phase(phase), To: u.Phase, Message: u.Message, At: u.UpdatedAt.UTC(),
		}
		seqs, err := s.flushChanges(ctx, tx, []PhaseChange{*change})
		if err != nil {
			return nil, err
		}
		change.Seq = seqs[0]
	}
	if u.Report == ReportAlways || (u.Report == ReportOnChange && change != nil) {
		restate := 0
		if u.Restate {
			restate = 1
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO github_outbox
			(deployment_id, project, app, environment, slot, phase, message, live_url, restate, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			u.ID, app.Project, app.Name, env, SlotOf(app, env), string(u.Phase), u.Message, u.LiveURL, restate, ts(u.UpdatedAt)); err != nil {
			return nil, fmt.Errorf("queueing the GitHub report: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return change, nil
}

func (s *sqlStore) SetGitHub(ctx context.Context, deploymentID, githubID int64, state string) error {
	defer s.lockWrites()()
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE deployments SET github_id = ?, github_state = ? WHERE id = ?`), githubID, state, deploymentID)
	if err != nil {
		return fmt.Errorf("recording GitHub deployment: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("deployment %d: %w", deploymentID, ErrNotFound)
	}
	return nil
}

func (s *sqlStore) SendOutbox(ctx context.Context, slots []int, send func(OutboxEntry)) (_ bool, err error) {
	const cols = `id, deployment_id, project, app, environment, phase, message, live_url, restate, created_at`
	scan := func(row interface{ Scan(...any) error }) (OutboxEntry, error) {
		var (
			e       OutboxEntry
			phase   string
			restate int64
			created int64
		)
		err := row.Scan(&e.ID, &e.DeploymentID, &e.App.Project, &e.App.Name, &e.Environment, &phase, &e.Message, &e.LiveURL, &restate, &created)
		e.Phase, e.Restate, e.CreatedAt = Phase(phase), restate != 0, fromTS(created)
		return e, err
	}
	if !s.d.advisory {
		// One replica: no lock, and no write transaction held while send
		// talks to GitHub.
		e, err := scan(s.db.QueryRowContext(ctx, `SELECT `+cols+` FROM github_outbox ORDER BY id LIMIT 1`))
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading the GitHub outbox: %w", err)
		}
		if e.Retried, err = s.markSending(ctx, e.ID); err != nil {
			return false, err
		}
		send(e)
		return true, s.deleteSent(ctx, e.ID)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin: %w", err)
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	where, args := "", []any{}
	if slots != nil {
		s64 := make([]int64, len(slots))
		for i, v := range slots {
			s64[i] = int64(v)
		}
		where, args = "WHERE slot = ANY($1)", append(args, s64)
	}
	e, err := scan(tx.QueryRowContext(ctx, `SELECT `+cols+` FROM github_outbox `+where+` ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the GitHub outbox: %w", err)
	}
	// The mark is written outside tx, which dies with its sender.
	if e.Retried, err = s.markSending(ctx, e.ID); err != nil {
		return false, err
	}
	send(e)
	for _, q := range []string{`DELETE FROM github_outbox WHERE id = $1`, `DELETE FROM github_sends WHERE outbox_id = $1`} {
		if _, err := tx.ExecContext(ctx, q, e.ID); err != nil {
			return true, fmt.Errorf("deleting a sent GitHub report: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return true, fmt.Errorf("commit: %w", err)
	}
	return true, nil
}

// markSending records that the outbox report id is being sent; it reports
// whether an earlier attempt was recorded (Retried).
func (s *sqlStore) markSending(ctx context.Context, id int64) (bool, error) {
	n, err := s.execWrite(ctx, `INSERT INTO github_sends (outbox_id, started_at) VALUES (?, ?) ON CONFLICT (outbox_id) DO NOTHING`,
		id, ts(time.Now()))
	if err != nil {
		return false, fmt.Errorf("recording a GitHub report being sent: %w", err)
	}
	return n == 0, nil
}

// deleteSent deletes the sent report id and its mark in one transaction
// (one replica: no lock is held while the report is sent).
func (s *sqlStore) deleteSent(ctx context.Context, id int64) (err error) {
	defer s.lockWrites()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	for _, q := range []string{`DELETE FROM github_outbox WHERE id = ?`, `DELETE FROM github_sends WHERE outbox_id = ?`} {
		if _, err := tx.ExecContext(ctx, s.q(q), id); err != nil {
			return fmt.Errorf("deleting a sent GitHub report: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

const deploymentCols = `id, project, app, environment, revision, spec_revision, started_at, finished_at, updated_at, phase, message,
	components, checks, live_url, timeout_ms, github_id, github_state`

func scanDeployment(row interface{ Scan(...any) error }) (Deployment, error) {
	var (
		d                          Deployment
		started, finished, updated int64
		phase, comps, checks       string
		timeoutMS                  int64
	)
	if err := row.Scan(&d.ID, &d.App.Project, &d.App.Name, &d.Environment, &d.Revision, &d.SpecRevision, &started, &finished, &updated,
		&phase, &d.Message, &comps, &checks, &d.LiveURL, &timeoutMS, &d.GitHubID, &d.GitHubState); err != nil {
		return d, err
	}
	d.StartedAt, d.FinishedAt, d.UpdatedAt = fromTS(started), fromTS(finished), fromTS(updated)
	d.Phase = Phase(phase)
	d.Timeout = time.Duration(timeoutMS) * time.Millisecond
	if checks != "" {
		d.Checks = json.RawMessage(checks)
	}
	if err := json.Unmarshal([]byte(comps), &d.Components); err != nil {
		return d, fmt.Errorf("decoding components of deployment %d: %w", d.ID, err)
	}
	if d.Components == nil {
		d.Components = []ComponentState{}
	}
	return d, nil
}

func (s *sqlStore) Deployment(ctx context.Context, id int64) (Deployment, error) {
	d, err := scanDeployment(s.db.QueryRowContext(ctx, s.q(`SELECT `+deploymentCols+` FROM deployments WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("deployment %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("reading deployment %d: %w", id, err)
	}
	return d, nil
}

func (s *sqlStore) queryDeployments(ctx context.Context, query string, args ...any) ([]Deployment, error) {
	return queryAll(ctx, s.db, "deployments", s.q(query), scanDeployment, args...)
}

// queryAll runs a query and scans each row with scan; what names the rows
// in errors.
func queryAll[T any](ctx context.Context, db *sql.DB, what, query string, scan func(interface{ Scan(...any) error }) (T, error), args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing %s: %w", what, err)
	}
	return out, nil
}

func (s *sqlStore) Deployments(ctx context.Context, app layout.AppRef, limit int, beforeID int64) ([]Deployment, error) {
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	return s.queryDeployments(ctx, `SELECT `+deploymentCols+` FROM deployments
		WHERE project = ? AND app = ? AND id < ? ORDER BY id DESC LIMIT ?`, app.Project, app.Name, beforeID, limit)
}

func (s *sqlStore) DeploymentsIn(ctx context.Context, app layout.AppRef, env string, limit int, beforeID int64) ([]Deployment, error) {
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	return s.queryDeployments(ctx, `SELECT `+deploymentCols+` FROM deployments
		WHERE project = ? AND app = ? AND environment = ? AND id < ? ORDER BY id DESC LIMIT ?`, app.Project, app.Name, env, beforeID, limit)
}

func (s *sqlStore) ActiveDeployments(ctx context.Context) ([]Deployment, error) {
	return s.queryDeployments(ctx, `SELECT `+deploymentCols+` FROM deployments
		WHERE finished_at = 0 OR id IN (SELECT deployment_id FROM apps) ORDER BY id`)
}

const appCols = `project, name, environment, phase, message, deployment_id, revision, spec_revision, live_url, updated_at`

func scanApp(row interface{ Scan(...any) error }) (App, error) {
	var (
		a       App
		phase   string
		updated int64
	)
	if err := row.Scan(&a.Project, &a.Name, &a.Environment, &phase, &a.Message, &a.DeploymentID, &a.Revision, &a.SpecRevision, &a.LiveURL, &updated); err != nil {
		return a, err
	}
	a.Phase, a.UpdatedAt = Phase(phase), fromTS(updated)
	return a, nil
}

func (s *sqlStore) Apps(ctx context.Context) ([]App, error) {
	return queryAll(ctx, s.db, "apps", `SELECT `+appCols+` FROM apps ORDER BY project, name, environment`, scanApp)
}

func (s *sqlStore) App(ctx context.Context, app layout.AppRef, env string) (App, error) {
	a, err := scanApp(s.db.QueryRowContext(ctx, s.q(`SELECT `+appCols+` FROM apps WHERE project = ? AND name = ? AND environment = ?`), app.Project, app.Name, env))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("app %s: %w", AppKey(app, env), ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("reading app %s: %w", AppKey(app, env), err)
	}
	return a, nil
}

func (s *sqlStore) PhaseChanges(ctx context.Context, after int64, limit int) ([]PhaseChange, error) {
	return queryAll(ctx, s.db, "phase changes", s.q(`SELECT seq, project, app, environment, deployment_id, revision, from_phase, to_phase, message, at
		FROM phase_changes WHERE seq > ? ORDER BY seq LIMIT ?`), scanPhaseChange, after, limit)
}

func (s *sqlStore) AppPhaseChanges(ctx context.Context, app layout.AppRef, env string, minDeployment, maxDeployment int64, limit int) ([]PhaseChange, error) {
	return queryAll(ctx, s.db, "phase changes", s.q(`SELECT seq, project, app, environment, deployment_id, revision, from_phase, to_phase, message, at
		FROM phase_changes WHERE project = ? AND app = ? AND environment = ? AND deployment_id BETWEEN ? AND ? ORDER BY seq DESC LIMIT ?`),
		scanPhaseChange, app.Project, app.Name, env, minDeployment, maxDeployment, limit)
}

func scanPhaseChange(row interface{ Scan(...any) error }) (PhaseChange, error) {
	var (
		c        PhaseChange
		from, to string
		at       int64
	)
	if err := row.Scan(&c.Seq, &c.App.Project, &c.App.Name, &c.Environment, &c.DeploymentID, &c.Revision, &from, &to, &c.Message, &at); err != nil {
		return c, err
	}
	c.From, c.To, c.At = Phase(from), Phase(to), fromTS(at)
	return c, nil
}

func (s *sqlStore) Events(ctx context.Context, app layout.AppRef, limit int) ([]Event, error) {
	return queryAll(ctx, s.db, "events", s.q(`SELECT id, received_at, event_time, object_kind, object_namespace, object_name,
		severity, reason, message, revision, controller, project, app, component, spec_revision, status, deployment_id, ignored_reason, environment
		FROM events WHERE project = ? AND app = ? ORDER BY id DESC LIMIT ?`), scanEvent, app.Project, app.Name, limit)
}

func scanEvent(row interface{ Scan(...any) error }) (Event, error) {
	var (
		e         Event
		rcv, evts int64
	)
	if err := row.Scan(&e.ID, &rcv, &evts, &e.Kind, &e.Namespace, &e.Name, &e.Severity, &e.Reason, &e.Message,
		&e.Revision, &e.Controller, &e.App.Project, &e.App.Name, &e.Component, &e.SpecRevision, &e.Status, &e.DeploymentID, &e.IgnoredReason, &e.Environment); err != nil {
		return e, err
	}
	e.ReceivedAt, e.EventTime = fromTS(rcv), fromTS(evts)
	return e, nil
}

func (s *sqlStore) LatestSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM phase_changes`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("reading latest phase change: %w", err)
	}
	return seq, nil
}
