package store

import (
	"errors"
	"hash/fnv"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// envEv is ev in an environment.
func envEv(key, env, rev, reason, health string, at time.Time) Event {
	e := ev(key, "shop", "api", "web", rev, reason, health, at)
	e.Environment = env
	e.Name = "shop-api-web"
	return e
}

// TestEnvironmentsAreSeparateHistories checks that the same app and fleet
// revision in two environments is two deployments that never supersede
// each other, each with its own app state, phase changes and GitHub
// reports, and that an app of no environment is a third.
func TestEnvironmentsAreSeparateHistories(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		rev1, rev2 := "main@sha1:1111", "main@sha1:2222"
		got, err := s.RecordEvents(ctx, []Event{
			envEv("s1", "staging", rev1, "Progressing", HealthProgressing, t0),
			envEv("p1", "production", rev1, "Progressing", HealthProgressing, t0),
			envEv("n1", "", rev1, "Progressing", HealthProgressing, t0),
		}, t0)
		if err != nil {
			t.Fatal(err)
		}
		stg, prod, none := got[0].DeploymentID, got[1].DeploymentID, got[2].DeploymentID
		if !got[0].NewDeployment || !got[1].NewDeployment || !got[2].NewDeployment || stg == prod || prod == none || stg == none {
			t.Fatalf("recorded = %+v", got)
		}
		// Staging moves to rev2: production's deployment of rev1 stays open and current.
		r2, err := s.RecordEvents(ctx, []Event{envEv("s2", "staging", rev2, "Progressing", HealthProgressing, t0.Add(time.Minute))}, t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		stg2 := r2[0].DeploymentID
		old, _ := s.Deployment(ctx, stg)
		if !old.Finished() || old.Environment != "staging" {
			t.Errorf("staging's first deployment = %+v", old)
		}
		p, _ := s.Deployment(ctx, prod)
		if p.Finished() || p.Environment != "production" || p.Revision != rev1 {
			t.Errorf("production's deployment = %+v", p)
		}
		// A revision-less event joins the newest deployment of its own environment.
		late := envEv("p-helm", "production", "", "Progressing", HealthProgressing, t0.Add(2*time.Minute))
		late.Kind, late.JoinLatest = "HelmRelease", true
		if r, err := s.RecordEvents(ctx, []Event{late}, t0.Add(2*time.Minute)); err != nil || r[0].DeploymentID != prod {
			t.Errorf("join latest in production = %+v, %v (want deployment %d)", r, err, prod)
		}

		// Separate phases: production runs, staging fails.
		if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: prod, Phase: PhaseRunning, Message: "ok", UpdatedAt: t0.Add(3 * time.Minute), Report: ReportOnChange}); err != nil {
			t.Fatal(err)
		}
		c, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: stg2, Phase: PhaseFailed, Message: "broken", UpdatedAt: t0.Add(3 * time.Minute), Report: ReportOnChange})
		if err != nil || c == nil || c.Environment != "staging" {
			t.Fatalf("staging's change = %+v, %v", c, err)
		}
		for env, want := range map[string]struct {
			phase Phase
			id    int64
		}{"staging": {PhaseFailed, stg2}, "production": {PhaseRunning, prod}, "": {PhasePending, none}} {
			a, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, env)
			if err != nil {
				t.Fatalf("app in %q: %v", env, err)
			}
			if a.Phase != want.phase || a.DeploymentID != want.id || a.Environment != env {
				t.Errorf("app in %q = %+v, want %s at %d", env, a, want.phase, want.id)
			}
		}
		if _, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "qa"); !errors.Is(err, ErrNotFound) {
			t.Errorf("app in an environment it never ran in: %v", err)
		}
		apps, err := s.Apps(ctx)
		if err != nil || len(apps) != 3 || apps[0].Environment != "" || apps[1].Environment != "production" || apps[2].Environment != "staging" {
			t.Errorf("apps = %+v, %v", apps, err)
		}

		// Lists: all environments, or one.
		all, err := s.Deployments(ctx, layout.AppRef{Project: "shop", Name: "api"}, 10, 0)
		if err != nil || len(all) != 4 {
			t.Fatalf("all deployments = %+v, %v", all, err)
		}
		in, err := s.DeploymentsIn(ctx, layout.AppRef{Project: "shop", Name: "api"}, "staging", 10, 0)
		if err != nil || len(in) != 2 || in[0].ID != stg2 || in[1].ID != stg {
			t.Errorf("staging's deployments = %+v, %v", in, err)
		}
		in, err = s.DeploymentsIn(ctx, layout.AppRef{Project: "shop", Name: "api"}, "", 10, 0)
		if err != nil || len(in) != 1 || in[0].ID != none {
			t.Errorf("deployments of no environment = %+v, %v", in, err)
		}
		// Phase changes between the ids of production's only deployment
		// range over staging's too: only production's are listed.
		cs, err := s.AppPhaseChanges(ctx, layout.AppRef{Project: "shop", Name: "api"}, "production", stg, stg2, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Environment != "production" || c.DeploymentID != prod {
				t.Errorf("production's phase changes hold %+v", c)
			}
		}
		if len(cs) != 2 {
			t.Errorf("production's phase changes = %+v", cs)
		}
		evs, err := s.Events(ctx, layout.AppRef{Project: "shop", Name: "api"}, 10)
		if err != nil || len(evs) != 5 || evs[0].Environment != "production" {
			t.Errorf("events = %+v, %v", evs, err)
		}

		// The GitHub reports name their environment, in their app's slot there.
		var sent []OutboxEntry
		for {
			ok, err := s.SendOutbox(ctx, nil, func(e OutboxEntry) { sent = append(sent, e) })
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
		}
		if len(sent) != 2 || sent[0].Environment != "production" || sent[0].DeploymentID != prod || sent[1].Environment != "staging" || sent[1].Phase != PhaseFailed {
			t.Errorf("outbox = %+v", sent)
		}
		// An app of no environment keeps its slot and lock of before.
		h := fnv.New32a()
		h.Write([]byte("shop/api"))
		if SlotOf(layout.AppRef{Project: "shop", Name: "api"}, "") != int(h.Sum32()%OwnerSlots) || AppKey(layout.AppRef{Project: "shop", Name: "api"}, "") != "shop/api" || AppKey(layout.AppRef{Project: "shop", Name: "api"}, "staging") != "shop/api@staging" {
			t.Errorf("app keys: %q %q", AppKey(layout.AppRef{Project: "shop", Name: "api"}, ""), AppKey(layout.AppRef{Project: "shop", Name: "api"}, "staging"))
		}

		// Retention keeps the newest deployments of each environment.
		if _, err := s.Prune(ctx, Retention{KeepPerApp: 1}, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Deployment(ctx, prod); err != nil {
			t.Errorf("production's only deployment pruned: %v", err)
		}
		if _, err := s.Deployment(ctx, stg); !errors.Is(err, ErrNotFound) {
			t.Errorf("staging's superseded deployment kept: %v", err)
		}
	})
}

// TestMigrateEnvironments checks the migration to schema version 7 on a
// database written by version 6: its history is the history of no
// environment, new deployments take new ids, and the same revision may
// then run in two environments.
func TestMigrateEnvironments(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		resetTo(t, s, 6)
		for _, q := range []string{
			`INSERT INTO deployments (id, project, app, revision, spec_revision, started_at, finished_at, updated_at, phase, message,
				components, checks, live_url, timeout_ms, github_id, github_state, superseded_by)
				VALUES (41, 'shop', 'api', 'main@sha1:1111', 'spec1', 1, 0, 1, 'running', 'ok', '[]', '', '', 0, 7, 'success', 0)`,
			`INSERT INTO apps (project, name, phase, message, deployment_id, revision, spec_revision, live_url, updated_at)
				VALUES ('shop', 'api', 'running', 'ok', 41, 'main@sha1:1111', 'spec1', '', 1)`,
			`INSERT INTO phase_changes (project, app, deployment_id, revision, from_phase, to_phase, message, at)
				VALUES ('shop', 'api', 41, 'main@sha1:1111', 'deploying', 'running', 'ok', 1)`,
			`INSERT INTO github_outbox (deployment_id, project, app, slot, phase, message, live_url, restate, created_at)
				VALUES (41, 'shop', 'api', 0, 'running', 'ok', '', 0, 1)`,
		} {
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if s.Dialect() == "postgres" {
			// As the identity column would stand after 41 inserts.
			if _, err := s.db.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('deployments', 'id'), 41)`); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.migrate(ctx, t0); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Version(ctx); err != nil || v != SchemaVersion() {
			t.Fatalf("version = %d, %v", v, err)
		}
		d, err := s.Deployment(ctx, 41)
		if err != nil || d.Environment != "" || d.Phase != PhaseRunning || d.GitHubID != 7 {
			t.Fatalf("deployment after the migration = %+v, %v", d, err)
		}
		a, err := s.App(ctx, layout.AppRef{Project: "shop", Name: "api"}, "")
		if err != nil || a.DeploymentID != 41 || a.Phase != PhaseRunning {
			t.Fatalf("app after the migration = %+v, %v", a, err)
		}
		cs, err := s.AppPhaseChanges(ctx, layout.AppRef{Project: "shop", Name: "api"}, "", 41, 41, 10)
		if err != nil || len(cs) != 1 {
			t.Errorf("phase changes after the migration = %+v, %v", cs, err)
		}
		got, err := s.RecordEvents(ctx, []Event{
			envEv("s1", "staging", "main@sha1:1111", "Progressing", HealthProgressing, t0),
			envEv("n1", "", "main@sha1:1111", "Progressing", HealthProgressing, t0),
		}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].DeploymentID <= 41 || !got[0].NewDeployment || got[1].DeploymentID != 41 || got[1].NewDeployment {
			t.Errorf("recorded after the migration = %+v", got)
		}
		var sent []OutboxEntry
		if _, err := s.SendOutbox(ctx, nil, func(e OutboxEntry) { sent = append(sent, e) }); err != nil || len(sent) != 1 || sent[0].Environment != "" {
			t.Errorf("outbox after the migration = %+v, %v", sent, err)
		}
	})
}
