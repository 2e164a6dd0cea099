package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// TestTextPostgresRefuses checks that NUL and invalid UTF-8, which
// PostgreSQL's TEXT refuses and SQLite keeps, are stored the same way by
// both: as U+FFFD.
func TestTextPostgresRefuses(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		e := ev("nul", "shop", "api", "web", "main@sha1:1111", "Progressing", HealthProgressing, t0)
		e.Message = "bad\x00byte \xff\xfe end"
		e.Body = []byte("{\"message\":\"bad \xff\"}\x00")
		got, err := s.RecordEvents(ctx, []Event{e}, t0)
		if err != nil {
			t.Fatalf("RecordEvents: %v", err)
		}
		evs, err := s.Events(ctx, layout.AppRef{Project: "shop", Name: "api"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Message != "bad\uFFFDbyte \uFFFD end" {
			t.Fatalf("events = %+v", evs)
		}
		var body string
		if err := s.db.QueryRowContext(ctx, s.q(`SELECT body FROM events WHERE id = ?`), got[0].EventID).Scan(&body); err != nil {
			t.Fatal(err)
		}
		if body != "{\"message\":\"bad \uFFFD\"}\uFFFD" {
			t.Errorf("body = %q", body)
		}
		if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: got[0].DeploymentID, Phase: PhaseDeploying,
			Message: "probe said \x00", UpdatedAt: t0}); err != nil {
			t.Errorf("UpdateDeployment: %v", err)
		}
	})
}

// TestIgnoredEventsKeepNoBody checks that an event of no known app is kept
// as metadata only.
func TestIgnoredEventsKeepNoBody(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		big := strings.Repeat("x", 1<<20)
		got, err := s.RecordEvents(ctx, []Event{
			{DedupeKey: "ign", Kind: "GitRepository", Namespace: "flux-system", Name: "fleet", Reason: "NewArtifact", Body: []byte(big)},
			ev("app", "shop", "api", "web", "main@sha1:1111", "Progressing", HealthProgressing, t0),
		}, t0)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []int{0, 2} {
			var n int
			if err := s.db.QueryRowContext(ctx, s.q(`SELECT LENGTH(body) FROM events WHERE id = ?`), got[i].EventID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Errorf("event %d: body of %d bytes stored, want %d", i, n, want)
			}
		}
	})
}

// TestSupersedeUsesActiveIndex checks that a new deployment finds the
// deployments it supersedes through the index of open ones, not by walking
// the app's history.
func TestSupersedeUsesActiveIndex(t *testing.T) {
	t.Parallel()
	s := openTestSQLite(t)
	rows, err := s.db.QueryContext(t.Context(), `EXPLAIN QUERY PLAN UPDATE deployments SET updated_at = 1
		WHERE project = 'p' AND app = 'a' AND environment = 'e' AND superseded_by = 0 AND id < 10`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if len(plan) != 1 || !strings.Contains(plan[0], "deployments_active (project=? AND app=? AND environment=? AND superseded_by=? AND id<?)") {
		t.Errorf("plan = %q, want a search of deployments_active", plan)
	}
}

// TestPrune checks the retention: per app the newest KeepPerApp
// deployments, deployments finished before MaxAge dropped with their events,
// old events and phase changes dropped, and an app's current deployment
// always kept.
func TestPrune(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, s *SQL) {
		ctx := t.Context()
		day := 24 * time.Hour
		var ids []int64
		// shop/api: 5 deployments, one a day; shop/old: 1, 100 days ago.
		for i := range 5 {
			at := t0.Add(time.Duration(i) * day)
			got, err := s.RecordEvents(ctx, []Event{ev(fmt.Sprint("api", i), "shop", "api", "web", fmt.Sprint("main@sha1:", i), "Progressing", HealthProgressing, at)}, at)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, got[0].DeploymentID)
		}
		old, err := s.RecordEvents(ctx, []Event{
			ev("old", "shop", "old", "web", "main@sha1:9", "Progressing", HealthProgressing, t0.Add(-100*day)),
			{DedupeKey: "ign-old", Kind: "GitRepository", Name: "fleet", Reason: "NewArtifact", ReceivedAt: t0.Add(-100 * day)},
			{DedupeKey: "ign-new", Kind: "GitRepository", Name: "fleet", Reason: "NewArtifact", ReceivedAt: t0},
		}, t0.Add(-100*day))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateDeployment(ctx, DeploymentUpdate{ID: old[0].DeploymentID, Phase: PhaseRunning,
			FinishedAt: t0.Add(-100 * day), UpdatedAt: t0.Add(-100 * day)}); err != nil {
			t.Fatal(err)
		}
		now := t0.Add(5 * day)
		got, err := s.Prune(ctx, Retention{KeepPerApp: 2, MaxAge: 90 * day}, now)
		if err != nil {
			t.Fatal(err)
		}
		// 3 deployments of api with their 3 events; the ignored old event;
		// the old app's phase changes (pending, running).
		if diff := cmp.Diff(Pruned{Deployments: 3, Events: 4, PhaseChanges: 2}, got); diff != "" {
			t.Errorf("pruned (-want +got):\n%s", diff)
		}
		ds, err := s.Deployments(ctx, layout.AppRef{Project: "shop", Name: "api"}, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		var kept []int64
		for _, d := range ds {
			kept = append(kept, d.ID)
		}
		if diff := cmp.Diff([]int64{ids[4], ids[3]}, kept); diff != "" {
			t.Errorf("deployments of shop/api (-want +got):\n%s", diff)
		}
		if _, err := s.Deployment(ctx, old[0].DeploymentID); err != nil {
			t.Errorf("the current deployment of shop/old was pruned: %v", err)
		}
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 4 { // api's 2 kept, old's current, ign-new
			t.Errorf("%d events left, want 4", n)
		}
		again, err := s.Prune(ctx, Retention{KeepPerApp: 2, MaxAge: 90 * day}, now)
		if err != nil || again != (Pruned{}) {
			t.Errorf("second prune = %+v, %v; want nothing", again, err)
		}
	})
}
