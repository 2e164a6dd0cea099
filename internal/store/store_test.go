package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// PostgresDSNEnv names the variable holding the DSN of a throwaway PostgreSQL
// server (hack/postgres/start.sh prints one).
const PostgresDSNEnv = "FLEETWRIGHT_TEST_POSTGRES_DSN"

var schemaSeq atomic.Int64

// forEachStore runs fn against a fresh SQLite store and a fresh PostgreSQL
// schema. Without a PostgreSQL DSN the PostgreSQL half fails in CI and is
// skipped elsewhere.
func forEachStore(t *testing.T, fn func(t *testing.T, s *SQL)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, openTestSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, openTestPostgres(t))
	})
}

func openTestSQLite(t *testing.T) *SQL {
	t.Helper()
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "history.db"), SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openTestPostgres(t *testing.T) *SQL {
	t.Helper()
	return openPostgresAt(t, testPostgresSchema(t))
}

func openPostgresAt(t *testing.T, dsn string) *SQL {
	t.Helper()
	s, err := OpenPostgres(t.Context(), dsn, PostgresOptions{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// testPostgresSchema creates a fresh schema, dropped at the end of the
// test, and returns the DSN that uses it.
func testPostgresSchema(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(PostgresDSNEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run hack/postgres/start.sh and export its DSN", PostgresDSNEnv)
		}
		t.Skipf("SKIPPING PostgreSQL: %s is not set (run hack/postgres/start.sh)", PostgresDSNEnv)
	}
	schema := fmt.Sprintf("t%d_%d", time.Now().UnixNano(), schemaSeq.Add(1))
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	return withSearchPath(t, dsn, schema)
}

func withSearchPath(t *testing.T, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ev(key, project, app, component, rev, reason, health string, at time.Time) Event {
	return Event{
		DedupeKey: key, ReceivedAt: at, EventTime: at,
		Kind: "Kustomization", Namespace: "flux-system", Name: project + "-" + app + "-" + component,
		Severity: "info", Reason: reason, Message: reason + " " + key, Revision: rev, Controller: "kustomize-controller",
		App: layout.AppRef{Project: project, Name: app}, Component: component, SpecRevision: "spec1",
		Health: health, Body: []byte(`{}`),
	}
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		v, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v != SchemaVersion() {
			t.Errorf("version = %d, want %d", v, SchemaVersion())
		}
		// Migrating again is a no-op.
		if err := s.migrate(ctx, t0); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != SchemaVersion() {
			t.Errorf("schema_migrations rows = %d, want %d", n, SchemaVersion())
		}
	})
}

func TestSQLiteReopenKeepsData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := OpenSQLite(t.Context(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordEvents(t.Context(), []Event{ev("a", "shop", "api", "web", "main@sha1:1", "Progressing", HealthProgressing, t0)}, t0); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenSQLite(t.Context(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	apps, err := s.Apps(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) != 1 || apps[0].Name != "api" {
		t.Errorf("apps after reopen = %+v", apps)
	}
}

func TestRecordEvents(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		rev1, rev2 := "main@sha1:1111", "main@sha1:2222"
		batch := []Event{
			ev("k1", "shop", "api", "db", rev1, "Progressing", HealthProgressing, t0),
			ev("k1", "shop", "api", "db", rev1, "Progressing", HealthProgressing, t0), // duplicate in the same batch
			ev("k2", "shop", "api", "db", rev1, "ReconciliationSucceeded", HealthHealthy, t0.Add(2*time.Second)),
			ev("k3", "shop", "api", "web", rev1, "Progressing", HealthProgressing, t0.Add(time.Second)),
			{DedupeKey: "k4", Kind: "GitRepository", Namespace: "flux-system", Name: "fleet", Reason: "NewArtifact", Body: []byte(`{}`)},
		}
		got, err := s.RecordEvents(ctx, batch, t0)
		if err != nil {
			t.Fatal(err)
		}
		if !got[1].Duplicate || got[0].Duplicate || !got[0].NewDeployment || got[2].NewDeployment {
			t.Errorf("recorded = %+v", got)
		}
		if got[0].DeploymentID == 0 || got[2].DeploymentID != got[0].DeploymentID || got[4].DeploymentID != 0 {
			t.Errorf("deployment ids = %+v", got)
		}
		// A repeat in a later batch is still a duplicate.
		again, err := s.RecordEvents(ctx, batch[:1], t0)
		if err != nil {
			t.Fatal(err)
		}
		if !again[0].Duplicate {
			t.Errorf("repeat not detected: %+v", again)
		}
		d, err := s.Deployment(ctx, got[0].DeploymentID)
		if err != nil {
			t.Fatal(err)
		}
		wantComps := []ComponentState{
			{Name: "db", Kind: "Kustomization", Health: HealthHealthy, Reason: "ReconciliationSucceeded", Message: "ReconciliationSucceeded k2", UpdatedAt: t0.Add(2 * time.Second)},
			{Name: "web", Kind: "Kustomization", Health: HealthProgressing, Reason: "Progressing", Message: "Progressing k3", UpdatedAt: t0.Add(time.Second)},
		}
		if diff := cmp.Diff(wantComps, d.Components); diff != "" {
			t.Errorf("components (-want +got):\n%s", diff)
		}
		if d.Phase != PhasePending || d.Revision != rev1 || d.SpecRevision != "spec1" || d.Finished() {
			t.Errorf("deployment = %+v", d)
		}
		// An older event does not overwrite a newer state.
		if _, err := s.RecordEvents(ctx, []Event{ev("k0", "shop", "api", "db", rev1, "Progressing", HealthProgressing, t0.Add(-time.Minute))}, t0); err != nil {
			t.Fatal(err)
		}
		d, _ = s.Deployment(ctx, got[0].DeploymentID)
		if d.Components[0].Health != HealthHealthy {
			t.Errorf("older event overwrote state: %+v", d.Components[0])
		}
		ignored, err := s.Events(ctx, layout.AppRef{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ignored) != 1 || ignored[0].Status != EventIgnored || ignored[0].Reason != "NewArtifact" {
			t.Errorf("ignored events = %+v", ignored)
		}
		evs, err := s.Events(ctx, layout.AppRef{Project: "shop", Name: "api"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 4 || evs[0].Reason != "Progressing" || evs[0].Status != EventApplied || evs[0].DeploymentID != got[0].DeploymentID {
			t.Errorf("app events = %+v", evs)
		}

		// A new revision supersedes the open deployment and becomes current.
		r2, err := s.RecordEvents(ctx, []Event{ev("k5", "shop", "api", "db", rev2, "Progressing", HealthProgressing, t0.Add(time.Hour))}, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		old, _ := s.Deployment(ctx, got[0].DeploymentID)
		if !old.Finished() || !strings.Contains(old.Message, "superseded by revision "+rev2) {
			t.Errorf("old deployment not superseded: %+v", old)
		}
		app, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if app.DeploymentID != r2[0].DeploymentID || app.Revision != rev2 || app.Phase != PhasePending {
			t.Errorf("app = %+v", app)
		}
		// A HelmRelease event joins the newest deployment.
		hr := ev("k6", "shop", "api", "db", "13.4.4", "InstallSucceeded", HealthHealthy, t0.Add(2*time.Hour))
		hr.Kind, hr.JoinLatest = "HelmRelease", true
		r3, err := s.RecordEvents(ctx, []Event{hr}, t0.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if r3[0].DeploymentID != r2[0].DeploymentID || r3[0].NewDeployment {
			t.Errorf("helm event = %+v, want deployment %d", r3[0], r2[0].DeploymentID)
		}
		changes, err := s.PhaseChanges(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var tos []string
		for _, c := range changes {
			tos = append(tos, fmt.Sprintf("%s %s->%s", c.Revision, c.From, c.To))
		}
		if diff := cmp.Diff([]string{rev1 + " ->pending", rev2 + " pending->pending"}, tos); diff != "" {
			t.Errorf("phase changes (-want +got):\n%s", diff)
		}
	})
}

// TestIgnoredReason checks that an event with an IgnoredReason is stored as
// ignored, without the app it names and without its body, whatever its
// Project and App say: it joins no deployment and changes no component.
func TestIgnoredReason(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		good := ev("k1", "victim", "web", "api", "main@sha1:1", "Progressing", HealthProgressing, t0)
		forged := ev("k2", "victim", "web", "api", "main@sha1:1", "HealthCheckFailed", HealthFailed, t0.Add(time.Second))
		forged.Namespace, forged.Kind, forged.Terminal = "team", "HelmRelease", true
		forged.IgnoredReason = "HelmRelease team/victim-web-api is not in project victim's namespace victim"
		got, err := s.RecordEvents(ctx, []Event{good, forged}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if got[1].DeploymentID != 0 || got[1].Duplicate || got[1].EventID == 0 {
			t.Errorf("forged event recorded as %+v", got[1])
		}
		d, err := s.Deployment(ctx, got[0].DeploymentID)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Components) != 1 || d.Components[0].Health != HealthProgressing {
			t.Errorf("components = %+v", d.Components)
		}
		evs, err := s.Events(ctx, layout.AppRef{Project: "victim", Name: "web"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Reason != "Progressing" {
			t.Errorf("the app's events = %+v", evs)
		}
		ignored, err := s.Events(ctx, layout.AppRef{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []Event{{Kind: "HelmRelease", Namespace: "team", Name: "victim-web-api", Severity: "info", Reason: "HealthCheckFailed",
			Message: "HealthCheckFailed k2", Revision: "main@sha1:1", Controller: "kustomize-controller", Status: EventIgnored,
			IgnoredReason: forged.IgnoredReason}}
		if diff := cmp.Diff(want, ignored, cmpopts.IgnoreFields(Event{}, "ID", "ReceivedAt", "EventTime")); diff != "" {
			t.Errorf("ignored events (-want +got):\n%s", diff)
		}
		var body string
		if err := s.db.QueryRowContext(ctx, s.q(`SELECT body FROM events WHERE id = ?`), got[1].EventID).Scan(&body); err != nil {
			t.Fatal(err)
		}
		if body != "" {
			t.Errorf("ignored event kept its body %q", body)
		}
	})
}

// TestMigrateIgnoredReason checks the migrations from schema version 3 on a
// database written by it: its events read as having no ignored reason.
func TestMigrateIgnoredReason(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		resetTo(t, s, 3)
		if _, err := s.db.ExecContext(ctx, `INSERT INTO events (dedupe_key, received_at, event_time, object_kind, object_namespace,
			object_name, severity, reason, message, revision, controller, project, app, component, spec_revision, status, deployment_id, body)
			VALUES ('k', 1, 1, 'GitRepository', 'flux-system', 'fleet', 'info', 'NewArtifact', '', '', '', '', '', '', '', 'ignored', 0, '')`); err != nil {
			t.Fatal(err)
		}
		if err := s.migrate(ctx, t0); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Version(ctx); err != nil || v != SchemaVersion() {
			t.Fatalf("version = %d, %v", v, err)
		}
		evs, err := s.Events(ctx, layout.AppRef{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].IgnoredReason != "" || evs[0].Status != EventIgnored {
			t.Errorf("events after the migration = %+v", evs)
		}
	})
}

// resetTo empties the database and migrates it to schema version v: a
// database an older build wrote.
func resetTo(t *testing.T, s *SQL, v int) {
	t.Helper()
	for _, table := range []string{"events", "deployments", "apps", "phase_changes", "sessions", "github_outbox", "github_sends", "schema_migrations"} {
		if _, err := s.db.ExecContext(t.Context(), `DROP TABLE IF EXISTS `+table); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.migrateTo(t.Context(), t0, v); err != nil {
		t.Fatal(err)
	}
}

func TestJoinLatestWithoutDeployment(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		hr := ev("h1", "shop", "cache", "redis", "19.0.1", "InstallSucceeded", HealthHealthy, t0)
		hr.Kind, hr.JoinLatest = "HelmRelease", true
		r, err := s.RecordEvents(t.Context(), []Event{hr}, t0)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Deployment(t.Context(), r[0].DeploymentID)
		if err != nil {
			t.Fatal(err)
		}
		if !r[0].NewDeployment || d.Revision != "19.0.1" || d.Components[0].Kind != "HelmRelease" {
			t.Errorf("deployment = %+v", d)
		}
	})
}

func TestUpdateDeployment(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		r, err := s.RecordEvents(ctx, []Event{
			ev("a", "shop", "api", "web", "main@sha1:1", "Progressing", HealthProgressing, t0),
		}, t0)
		if err != nil {
			t.Fatal(err)
		}
		id := r[0].DeploymentID
		checks := json.RawMessage(`[{"name":"sync","state":"passed"}]`)
		c, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseDeploying, Message: "waiting", Checks: checks, Timeout: 90 * time.Second, UpdatedAt: t0.Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if c == nil || c.From != PhasePending || c.To != PhaseDeploying || c.Seq == 0 {
			t.Fatalf("change = %+v", c)
		}
		// Same phase: no change recorded.
		c2, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseDeploying, Message: "still waiting", Checks: checks, Timeout: 90 * time.Second, UpdatedAt: t0.Add(2 * time.Second)})
		if err != nil || c2 != nil {
			t.Fatalf("same phase: change %+v, err %v", c2, err)
		}
		c3, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseRunning, Message: "all checks passed", Checks: checks, LiveURL: "https://api.example.com/", Timeout: 90 * time.Second, FinishedAt: t0.Add(3 * time.Second), UpdatedAt: t0.Add(3 * time.Second)})
		if err != nil || c3 == nil || c3.Seq <= c.Seq {
			t.Fatalf("running: change %+v, err %v", c3, err)
		}
		d, err := s.Deployment(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Phase != PhaseRunning || d.LiveURL != "https://api.example.com/" || string(d.Checks) != string(checks) || d.Timeout != 90*time.Second || !d.FinishedAt.Equal(t0.Add(3*time.Second)) {
			t.Errorf("deployment = %+v", d)
		}
		app, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "")
		if err != nil {
			t.Fatal(err)
		}
		want := App{AppRef: layout.AppRef{Project: "shop", Name: "api"}, Phase: PhaseRunning, Message: "all checks passed", DeploymentID: id,
			Revision: "main@sha1:1", SpecRevision: "spec1", LiveURL: "https://api.example.com/", UpdatedAt: t0.Add(3 * time.Second)}
		if diff := cmp.Diff(want, app); diff != "" {
			t.Errorf("app (-want +got):\n%s", diff)
		}
		if err := s.SetGitHub(ctx, id, 42, "success"); err != nil {
			t.Fatal(err)
		}
		d, _ = s.Deployment(ctx, id)
		if d.GitHubID != 42 || d.GitHubState != "success" {
			t.Errorf("github = %d %q", d.GitHubID, d.GitHubState)
		}
		if err := s.SetGitHub(ctx, 9999, 1, "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetGitHub(missing) = %v, want ErrNotFound", err)
		}
		if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: 9999, Phase: PhaseFailed}); !errors.Is(err, ErrNotFound) {
			t.Errorf("UpdateDeployment(missing) = %v, want ErrNotFound", err)
		}
		if _, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "nope"}, ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("App(missing) = %v, want ErrNotFound", err)
		}

		// An update of a superseded deployment moves neither the app nor its end time.
		r2, err := s.RecordEvents(ctx, []Event{ev("b", "shop", "api", "web", "main@sha1:2", "Progressing", HealthProgressing, t0.Add(time.Hour))}, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if c, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseDegraded, UpdatedAt: t0.Add(2 * time.Hour)}); err != nil || c != nil {
			t.Fatalf("update of a superseded deployment = %+v, %v", c, err)
		}
		if d, _ := s.Deployment(ctx, id); d.Phase != PhaseRunning || d.Message != "all checks passed" {
			t.Errorf("superseded deployment changed: %+v", d)
		}
		app, _ = s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "")
		if app.Phase != PhasePending || app.DeploymentID != r2[0].DeploymentID {
			t.Errorf("app moved by old deployment: %+v", app)
		}
		active, err := s.ActiveDeployments(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(active) != 1 || active[0].ID != r2[0].DeploymentID {
			t.Errorf("active = %+v", active)
		}
	})
}

// TestSpecRevisionFromCluster checks that a spec revision read from the
// cluster replaces the one the first event carried, on the deployment and its
// app, that later events do not change it back, and that an update can
// clear it.
func TestSpecRevisionFromCluster(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		stale := ev("a", "shop", "api", "web", "main@sha1:2", "Progressing", HealthProgressing, t0)
		stale.SpecRevision = "spec-of-the-previous-revision"
		r, err := s.RecordEvents(ctx, []Event{stale}, t0)
		if err != nil {
			t.Fatal(err)
		}
		id := r[0].DeploymentID
		specs := func() (string, string) {
			t.Helper()
			d, err := s.Deployment(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			a, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "")
			if err != nil {
				t.Fatal(err)
			}
			return d.SpecRevision, a.SpecRevision
		}
		steps := []struct {
			name string
			do   func() error
			want string
		}{
			{"as the first event said", func() error { return nil }, "spec-of-the-previous-revision"},
			{"an update without one keeps it", func() error {
				_, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseDeploying, UpdatedAt: t0.Add(time.Second)})
				return err
			}, "spec-of-the-previous-revision"},
			{"the cluster's replaces it", func() error {
				_, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseDeploying, SpecRevision: "spec2", UpdatedAt: t0.Add(2 * time.Second)})
				return err
			}, "spec2"},
			{"a later event does not change it", func() error {
				later := ev("b", "shop", "api", "web", "main@sha1:2", "ReconciliationSucceeded", HealthHealthy, t0.Add(3*time.Second))
				later.SpecRevision = "spec-of-the-previous-revision"
				_, err := s.RecordEvents(ctx, []Event{later}, t0.Add(3*time.Second))
				return err
			}, "spec2"},
			{"nor does a later update without one", func() error {
				_, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseRunning, FinishedAt: t0.Add(4 * time.Second), UpdatedAt: t0.Add(4 * time.Second)})
				return err
			}, "spec2"},
			{"an update that knows there is none clears it", func() error {
				_, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseDeleted, NoSpecRevision: true, FinishedAt: t0.Add(4 * time.Second), UpdatedAt: t0.Add(5 * time.Second)})
				return err
			}, ""},
		}
		for _, st := range steps {
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if d, a := specs(); d != st.want || a != st.want {
				t.Errorf("%s: deployment spec revision %q, app %q; want %q", st.name, d, a, st.want)
			}
		}
	})
}

// TestDeletedIsFinal checks that a deleted app keeps its history, answers
// at no URL, and that its deployment ends.
func TestDeletedIsFinal(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		r, err := s.RecordEvents(ctx, []Event{ev("a", "shop", "api", "web", "main@sha1:1", "ReconciliationSucceeded", HealthHealthy, t0)}, t0)
		if err != nil {
			t.Fatal(err)
		}
		id := r[0].DeploymentID
		end := t0.Add(time.Minute)
		if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseRunning, LiveURL: "https://api.example.test/", FinishedAt: t0, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		c, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: id, Phase: PhaseDeleted, Message: "Flux pruned the app", FinishedAt: end, UpdatedAt: end})
		if err != nil {
			t.Fatal(err)
		}
		if c == nil || c.From != PhaseRunning || c.To != PhaseDeleted {
			t.Errorf("change = %+v", c)
		}
		a, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "")
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Deployment(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if a.Phase != PhaseDeleted || a.Message != "Flux pruned the app" || a.LiveURL != "" || !d.Finished() || !PhaseDeleted.Final() {
			t.Errorf("app %+v, deployment %+v", a, d)
		}
	})
}

func TestDeploymentsPagination(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		var ids []int64
		for i := range 5 {
			at := t0.Add(time.Duration(i) * time.Minute)
			r, err := s.RecordEvents(ctx, []Event{ev(fmt.Sprint(i), "shop", "api", "web", fmt.Sprintf("main@sha1:%d", i), "Progressing", HealthProgressing, at)}, at)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r[0].DeploymentID)
		}
		// Another app's deployments are not listed.
		if _, err := s.RecordEvents(ctx, []Event{ev("x", "shop", "other", "web", "main@sha1:9", "Progressing", HealthProgressing, t0)}, t0); err != nil {
			t.Fatal(err)
		}
		var pages [][]int64
		before := int64(0)
		for range 4 {
			ds, err := s.Deployments(ctx, layout.AppRef{Project: "shop", Name: "api"}, 2, before)
			if err != nil {
				t.Fatal(err)
			}
			var page []int64
			for _, d := range ds {
				page = append(page, d.ID)
			}
			pages = append(pages, page)
			if len(ds) < 2 {
				break
			}
			before = ds[len(ds)-1].ID
		}
		want := [][]int64{{ids[4], ids[3]}, {ids[2], ids[1]}, {ids[0]}}
		if diff := cmp.Diff(want, pages, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
	})
}

func TestPhaseChangesAfter(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		r, err := s.RecordEvents(ctx, []Event{ev("a", "p", "a", "c", "r1", "Progressing", HealthProgressing, t0)}, t0)
		if err != nil {
			t.Fatal(err)
		}
		for i, ph := range []Phase{PhaseDeploying, PhaseRunning, PhaseDegraded, PhaseRunning} {
			if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: r[0].DeploymentID, Phase: ph, UpdatedAt: t0.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		all, err := s.PhaseChanges(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 5 {
			t.Fatalf("changes = %d, want 5", len(all))
		}
		latest, err := s.LatestSeq(ctx)
		if err != nil || latest != all[4].Seq {
			t.Errorf("LatestSeq = %d, %v; want %d", latest, err, all[4].Seq)
		}
		rest, err := s.PhaseChanges(ctx, all[2].Seq, 100)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all[3:], rest); diff != "" {
			t.Errorf("after seq (-want +got):\n%s", diff)
		}
		r2, err := s.RecordEvents(ctx, []Event{ev("b", "p", "b", "c", "r1", "Progressing", HealthProgressing, t0),
			ev("a2", "p", "a", "c", "r2", "Progressing", HealthProgressing, t0)}, t0)
		if err != nil {
			t.Fatal(err)
		}
		id1, id2 := r[0].DeploymentID, r2[1].DeploymentID
		mine, err := s.AppPhaseChanges(ctx, layout.AppRef{Project: "p", Name: "a"}, "", id1, id1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]PhaseChange{all[4], all[3]}, mine); diff != "" {
			t.Errorf("AppPhaseChanges of the first deployment (-want +got):\n%s", diff)
		}
		both, err := s.AppPhaseChanges(ctx, layout.AppRef{Project: "p", Name: "a"}, "", id1, id2, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(both) != 6 || both[0].DeploymentID != id2 || both[0].To != PhasePending || both[1] != all[4] {
			t.Errorf("AppPhaseChanges of both deployments = %+v", both)
		}
		for i := 1; i < len(all); i++ {
			if all[i].Seq <= all[i-1].Seq || all[i].From != all[i-1].To {
				t.Errorf("change %d out of order: %+v after %+v", i, all[i], all[i-1])
			}
		}
	})
}
