package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// migrations are the schema steps in order; step i has version i+1. Append
// only: a released step is never edited. {{pk}} is the dialect's
// auto-increment primary key type. A step that differs between the
// dialects is a dialectStep's key (see dialectSteps).
var migrations = []string{
	`CREATE TABLE events (
		id {{pk}},
		dedupe_key TEXT NOT NULL UNIQUE,
		received_at BIGINT NOT NULL,
		event_time BIGINT NOT NULL,
		object_kind TEXT NOT NULL,
		object_namespace TEXT NOT NULL,
		object_name TEXT NOT NULL,
		severity TEXT NOT NULL,
		reason TEXT NOT NULL,
		message TEXT NOT NULL,
		revision TEXT NOT NULL,
		controller TEXT NOT NULL,
		project TEXT NOT NULL,
		app TEXT NOT NULL,
		component TEXT NOT NULL,
		spec_revision TEXT NOT NULL,
		status TEXT NOT NULL,
		deployment_id BIGINT NOT NULL,
		body TEXT NOT NULL
	);
	CREATE INDEX events_by_app ON events (project, app, id);
	CREATE TABLE deployments (
		id {{pk}},
		project TEXT NOT NULL,
		app TEXT NOT NULL,
		revision TEXT NOT NULL,
		spec_revision TEXT NOT NULL,
		started_at BIGINT NOT NULL,
		finished_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		phase TEXT NOT NULL,
		message TEXT NOT NULL,
		components TEXT NOT NULL,
		checks TEXT NOT NULL,
		live_url TEXT NOT NULL,
		timeout_ms BIGINT NOT NULL,
		github_id BIGINT NOT NULL,
		github_state TEXT NOT NULL,
		superseded_by BIGINT NOT NULL,
		UNIQUE (project, app, revision)
	);
	CREATE INDEX deployments_by_app ON deployments (project, app, id);
	CREATE INDEX deployments_open ON deployments (finished_at);
	CREATE TABLE apps (
		project TEXT NOT NULL,
		name TEXT NOT NULL,
		phase TEXT NOT NULL,
		message TEXT NOT NULL,
		deployment_id BIGINT NOT NULL,
		revision TEXT NOT NULL,
		spec_revision TEXT NOT NULL,
		live_url TEXT NOT NULL,
		updated_at BIGINT NOT NULL,
		PRIMARY KEY (project, name)
	);
	CREATE TABLE phase_changes (
		seq {{pk}},
		project TEXT NOT NULL,
		app TEXT NOT NULL,
		deployment_id BIGINT NOT NULL,
		revision TEXT NOT NULL,
		from_phase TEXT NOT NULL,
		to_phase TEXT NOT NULL,
		message TEXT NOT NULL,
		at BIGINT NOT NULL
	)`,
	// 2: a new deployment supersedes only its app's open ones (no scan of
	// the app's history); pruning finds events by deployment and age, and
	// old deployments and phase changes by age.
	`CREATE INDEX deployments_active ON deployments (project, app, superseded_by, id);
	CREATE INDEX events_by_deployment ON events (deployment_id);
	CREATE INDEX events_by_received ON events (received_at, id);
	CREATE INDEX phase_changes_by_at ON phase_changes (at)`,
	// 3: the phase changes of an app's deployments, for its status page.
	`CREATE INDEX phase_changes_by_app ON phase_changes (project, app, deployment_id, seq)`,
	// 4: why an event was ignored (an event of no app, or one whose object
	// may not speak for the app it names).
	`ALTER TABLE events ADD COLUMN ignored_reason TEXT NOT NULL DEFAULT ''`,
	// 5: the status pages' signed-in sessions, revocable at once.
	`CREATE TABLE sessions (
		id_hash TEXT PRIMARY KEY,
		kind TEXT NOT NULL,
		subject TEXT NOT NULL,
		email TEXT NOT NULL,
		grps TEXT NOT NULL,
		token_hash TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		expires_at BIGINT NOT NULL
	);
	CREATE INDEX sessions_by_expiry ON sessions (expires_at);
	CREATE INDEX sessions_by_subject ON sessions (kind, subject)`,
	// 6: the GitHub outbox: each state to post, written with the phase
	// change it reports, sent and deleted by the app's owner.
	`CREATE TABLE github_outbox (
		id {{pk}},
		deployment_id BIGINT NOT NULL,
		project TEXT NOT NULL,
		app TEXT NOT NULL,
		slot BIGINT NOT NULL,
		phase TEXT NOT NULL,
		message TEXT NOT NULL,
		live_url TEXT NOT NULL,
		restate BIGINT NOT NULL,
		created_at BIGINT NOT NULL
	);
	CREATE INDEX github_outbox_by_slot ON github_outbox (slot, id)`,
	// 7: environments. The same app in two environments is two histories:
	// a deployment is unique by project, app, environment and revision, and
	// an app's current state is one row per environment. Existing rows are
	// in the environment "" (a platform without environments).
	stepEnvironments,
	// 8: the outbox reports whose sending began: a report found here when
	// it is sent again may have reached GitHub already (its sender died
	// before deleting it), and is checked against GitHub first.
	`CREATE TABLE github_sends (
		outbox_id BIGINT PRIMARY KEY,
		started_at BIGINT NOT NULL
	)`,
}

// stepEnvironments is step 7's key in dialectSteps.
const stepEnvironments = "{{environments}}"

// dialectSteps are the steps whose text differs per dialect: SQLite
// cannot drop a table's constraints, so it copies the tables into new
// ones; PostgreSQL changes them in place and keeps its identity columns'
// sequences.
var dialectSteps = map[string]map[string]string{
	stepEnvironments: {
		"postgres": `ALTER TABLE deployments ADD COLUMN environment TEXT NOT NULL DEFAULT '';
	ALTER TABLE deployments DROP CONSTRAINT deployments_project_app_revision_key;
	ALTER TABLE deployments ADD CONSTRAINT deployments_by_revision UNIQUE (project, app, environment, revision);
	DROP INDEX deployments_by_app;
	CREATE INDEX deployments_by_app ON deployments (project, app, environment, id);
	DROP INDEX deployments_active;
	CREATE INDEX deployments_active ON deployments (project, app, environment, superseded_by, id);
	ALTER TABLE apps ADD COLUMN environment TEXT NOT NULL DEFAULT '';
	ALTER TABLE apps DROP CONSTRAINT apps_pkey;
	ALTER TABLE apps ADD PRIMARY KEY (project, name, environment);
	` + environmentColumns,
		"sqlite": `CREATE TABLE deployments_v7 (
		id {{pk}},
		project TEXT NOT NULL,
		app TEXT NOT NULL,
		environment TEXT NOT NULL DEFAULT '',
		revision TEXT NOT NULL,
		spec_revision TEXT NOT NULL,
		started_at BIGINT NOT NULL,
		finished_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		phase TEXT NOT NULL,
		message TEXT NOT NULL,
		components TEXT NOT NULL,
		checks TEXT NOT NULL,
		live_url TEXT NOT NULL,
		timeout_ms BIGINT NOT NULL,
		github_id BIGINT NOT NULL,
		github_state TEXT NOT NULL,
		superseded_by BIGINT NOT NULL,
		UNIQUE (project, app, environment, revision)
	);
	INSERT INTO deployments_v7 (id, project, app, revision, spec_revision, started_at, finished_at, updated_at,
		phase, message, components, checks, live_url, timeout_ms, github_id, github_state, superseded_by)
		SELECT id, project, app, revision, spec_revision, started_at, finished_at, updated_at,
		phase, message, components, checks, live_url, timeout_ms, github_id, github_state, superseded_by FROM deployments;
	DROP TABLE deployments;
	ALTER TABLE deployments_v7 RENAME TO deployments;
	CREATE INDEX deployments_by_app ON deployments (project, app, environment, id);
	CREATE INDEX deployments_open ON deployments (finished_at);
	CREATE INDEX deployments_active ON deployments (project, app, environment, superseded_by, id);
	CREATE TABLE apps_v7 (
		project TEXT NOT NULL,
		name TEXT NOT NULL,
		environment TEXT NOT NULL DEFAULT '',
		phase TEXT NOT NULL,
		message TEXT NOT NULL,
		deployment_id BIGINT NOT NULL,
		revision TEXT NOT NULL,
		spec_revision TEXT NOT NULL,
		live_url TEXT NOT NULL,
		updated_at BIGINT NOT NULL,
		PRIMARY KEY (project, name, environment)
	);
	INSERT INTO apps_v7 (project, name, phase, message, deployment_id, revision, spec_revision, live_url, updated_at)
		SELECT project, name, phase, message, deployment_id, revision, spec_revision, live_url, updated_at FROM apps;
	DROP TABLE apps;
	ALTER TABLE apps_v7 RENAME TO apps;
	` + environmentColumns,
	},
}

// environmentColumns is the part of step 7 both dialects share: the
// environment of each event, phase change and queued GitHub report.
const environmentColumns = `ALTER TABLE events ADD COLUMN environment TEXT NOT NULL DEFAULT '';
	ALTER TABLE phase_changes ADD COLUMN environment TEXT NOT NULL DEFAULT '';
	DROP INDEX phase_changes_by_app;
	CREATE INDEX phase_changes_by_app ON phase_changes (project, app, environment, deployment_id, seq);
	ALTER TABLE github_outbox ADD COLUMN environment TEXT NOT NULL DEFAULT ''`

// step returns the text of step v (1-based) for the dialect.
func (d dialect) step(v int) string {
	text := migrations[v-1]
	if alt, ok := dialectSteps[text]; ok {
		text = alt[d.name]
	}
	return strings.ReplaceAll(text, "{{pk}}", d.pk)
}

// SchemaVersion is the schema version this build migrates to.
func SchemaVersion() int { return len(migrations) }

// migrate applies the steps the database has not seen, in one transaction.
func (s *sqlStore) migrate(ctx context.Context, now time.Time) error {
	return s.migrateTo(ctx, now, len(migrations))
}

// migrateTo applies the steps the database has not seen up to version
// target (tests build an older schema with it).
func (s *sqlStore) migrateTo(ctx context.Context, now time.Time, target int) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return fmt.Errorf("locking for migration: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("creating schema_migrations: %w", err)
	}
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this build's %d", have, len(migrations))
	}
	for v := have + 1; v <= target; v++ {
		for stmt := range strings.SplitSeq(s.d.step(v), ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("schema version %d: %w", v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), v, ts(now)); err != nil {
			return fmt.Errorf("recording schema version %d: %w", v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	return nil
}

// Version returns the schema version recorded in the database.
func (s *sqlStore) Version(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return v, nil
}
