package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// BenchmarkOverview10k renders the overview of 10,000 apps (20 projects of
// 500) from SQLite on disk, through the handler: sign-in by bearer token,
// reading every app, filtering, and reading the checks of the 50 apps of
// the page; and the overview of a viewer of one project, by bearer token
// and by session (read from the store). The target is under 200 ms per page.
// go test -run '^$' -bench Overview10k ./internal/webhook/
func BenchmarkOverview10k(b *testing.B) {
	st, err := store.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const projects, perProject = 20, 500
	checks := benchChecks(b)
	phases := []store.Phase{store.PhaseRunning, store.PhaseRunning, store.PhaseRunning, store.PhaseDeploying, store.PhaseFailed, store.PhaseDegraded}
	at := pageT0
	for p := range projects {
		evs := make([]store.Event, 0, perProject)
		for i := range perProject {
			project, app := fmt.Sprintf("team%02d", p), fmt.Sprintf("app%03d", i)
			evs = append(evs, store.Event{DedupeKey: project + "/" + app, ReceivedAt: at, EventTime: at, Kind: "Kustomization",
				Namespace: "flux-system", Name: project + "-" + app + "-web", Severity: "info", Reason: "Progressing", Message: "configured",
				Revision: "main@sha1:2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293", App: layout.AppRef{Project: project, Name: app}, Component: "web",
				SpecRevision: "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", Health: store.HealthProgressing, Body: []byte(`{}`)})
		}
		recs, err := st.RecordEvents(b.Context(), evs, at)
		if err != nil {
			b.Fatal(err)
		}
		// The checks of every app of the first project (the first pages)
		// and of every tenth app elsewhere; the rest stay pending.
		for i, r := range recs {
			if p != 0 && i%10 != 0 {
				continue
			}
			ph := phases[i%len(phases)]
			if _, err := st.UpdateDeployment(b.Context(), store.DeploymentUpdate{ID: r.DeploymentID, Phase: ph, Message: "sync passed, readiness passed, reachability passed",
				Checks: checks, LiveURL: "https://" + evs[i].App.Name + ".example.test/", Timeout: 5 * time.Minute, UpdatedAt: at}); err != nil {
				b.Fatal(err)
			}
		}
	}
	srv, err := New(Config{Store: st, APIToken: testToken, RecheckInterval: -1, PruneInterval: -1, Pages: PagesConfig{ClusterName: "prod",
		FleetRepoURL: "https://git.example.test/acme/fleet", AppsRepoURL: "https://git.example.test/acme/apps",
		ViewerTokens: []ViewerToken{{Token: shopViewerToken, Projects: []string{"team07"}}}}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	h := srv.Handler()
	// A viewer of one project, signed in: the session is read from the
	// store on every request.
	tok, _ := srv.pages.sessions.token(shopViewerToken)
	cookie, _, err := srv.pages.sessions.create(b.Context(), store.Session{Kind: store.SessionToken, TokenHash: hexSum(tok)})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, path, tok, cookie string }{
		{"all-page-1", "/", testToken, ""},
		{"all-page-200", "/?page=200", testToken, ""},
		{"phase-running-page-3", "/?phase=running&page=3", testToken, ""},
		{"project-and-search", "/?project=team07&q=app04", testToken, ""},
		{"viewer-of-one-project-token", "/", shopViewerToken, ""},
		{"viewer-of-one-project-session", "/", "", cookie},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.path, nil)
			if bc.tok != "" {
				req.Header.Set("Authorization", "Bearer "+bc.tok)
			} else {
				req.AddCookie(&http.Cookie{Name: sessionCookie, Value: bc.cookie})
			}
			var worst time.Duration
			for b.Loop() {
				rec := httptest.NewRecorder()
				t0 := time.Now()
				h.ServeHTTP(rec, req)
				worst = max(worst, time.Since(t0))
				if rec.Code != 200 {
					b.Fatalf("GET %s = %d", bc.path, rec.Code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst_ms")
		})
	}
}

// benchChecks is a running deployment's checks, as the tracker writes them.
func benchChecks(b *testing.B) json.RawMessage {
	at := pageT0
	res := probe.Result{Checks: []probe.Check{
		{Name: probe.CheckSync, State: probe.StatePassed, Message: "1 Kustomization ready", Attempts: 2, CheckedAt: at,
			Components: []probe.ComponentStatus{{Component: "web", Kind: "Kustomization", Name: "x-web", State: probe.StatePassed}}},
		{Name: probe.CheckReadiness, State: probe.StatePassed, Message: "1 Deployment ready", Attempts: 3, CheckedAt: at,
			Components: []probe.ComponentStatus{{Component: "web", Kind: "Deployment", Name: "x-web", State: probe.StatePassed}}},
		{Name: probe.CheckReachability, State: probe.StatePassed, Message: "1 host reachable", Attempts: 1, CheckedAt: at,
			Endpoints: []probe.Endpoint{{Host: "x.example.test", URL: "https://x.example.test/", State: probe.StatePassed, StatusCode: 200,
				TLS: &probe.TLSInfo{Subject: "x.example.test", Issuer: "CA", NotAfter: at.Add(60 * 24 * time.Hour), DaysToExpiry: 60, Verified: true}}}},
	}}
	raw, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkSessionCheck measures what a signed-in request adds: reading the
// session back from SQLite on disk and working out its grant.
// go test -run '^$' -bench SessionCheck ./internal/webhook/
func BenchmarkSessionCheck(b *testing.B) {
	st, err := store.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	access, err := ParseAccess("access.yaml", []byte(testAccessFile))
	if err != nil {
		b.Fatal(err)
	}
	s := newSessions(st, testToken, nil, time.Hour, time.Now)
	s.oidc, s.access = true, access
	// 2,000 people signed in, one of whom asks.
	var v string
	for i := range 2000 {
		if v, _, err = s.create(b.Context(), store.Session{Kind: store.SessionOIDC, Subject: fmt.Sprintf("sub-%d", i), Groups: []string{"team-shop"}}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, vis, err := s.check(b.Context(), v); err != nil || !vis.grant.allows("shop") {
			b.Fatalf("check = %+v, %v", vis, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/check")
}
