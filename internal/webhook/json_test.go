package webhook

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// TestAPIJSONBytes pins the JSON the API, the stream and the hook write,
// byte for byte, keys and their order: the answers of GET /api/v1/apps,
// /api/v1/apps/{project}/{name}, …/deploy-status and …/deployments, a
// phase change on /api/v1/stream, and the answer of POST /hooks/flux.
func TestAPIJSONBytes(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	res := probe.NewResult()
	res.LiveURL = "https://x/"
	checks, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	app := layout.AppRef{Project: "shop", Name: "api"}
	a := store.App{AppRef: app, Environment: "staging", Phase: store.PhaseRunning, Message: "m", DeploymentID: 7, Revision: "main@sha1:abc",
		SpecRevision: "0123", LiveURL: "https://x/", UpdatedAt: at}
	d := store.Deployment{ID: 7, App: app, Environment: "staging", Revision: "main@sha1:abc", SpecRevision: "0123", StartedAt: at,
		FinishedAt: at.Add(time.Minute), UpdatedAt: at, Phase: store.PhaseRunning, Message: "m", LiveURL: "https://x/", Checks: checks,
		Components: []store.ComponentState{{Name: "web", Kind: "Kustomization", Health: store.HealthHealthy, Reason: "r", Message: "m", UpdatedAt: at}}}
	c := store.PhaseChange{Seq: 9, App: app, Environment: "staging", DeploymentID: 7, Revision: "main@sha1:abc",
		From: store.PhaseDeploying, To: store.PhaseRunning, Message: "m", At: at}
	for i, tc := range []struct {
		v    any
		want string
	}{
		{map[string]any{"apps": []store.App{a}}, `{"apps":[{"project":"shop","name":"api","environment":"staging","phase":"running","message":"m","deployment_id":7,"revision":"main@sha1:abc","spec_revision":"0123","live_url":"https://x/","updated_at":"2025-03-01T12:00:00Z"}]}`},
		{AppStatus{App: a, Deployment: DeploymentSummary{ID: d.ID, Revision: d.Revision, StartedAt: d.StartedAt, FinishedAt: d.FinishedAt},
			Sync: SyncStatus{State: probe.StatePassed, Revision: d.Revision}, Components: componentHealth(d, decodeResult(d))}, `{"project":"shop","name":"api","environment":"staging","phase":"running","message":"m","deployment_id":7,"revision":"main@sha1:abc","spec_revision":"0123","live_url":"https://x/","updated_at":"2025-03-01T12:00:00Z","deployment":{"id":7,"revision":"main@sha1:abc","started_at":"2025-03-01T12:00:00Z","finished_at":"2025-03-01T12:01:00Z"},"sync":{"state":"passed","revision":"main@sha1:abc"},"components":[{"name":"web","health":"healthy","message":"r: m","flux":{"name":"web","kind":"Kustomization","health":"healthy","reason":"r","message":"m","updated_at":"2025-03-01T12:00:00Z"}}]}`},
		{DeployStatus{AppRef: a.AppRef, Environment: a.Environment, DeploymentID: d.ID, Revision: d.Revision, Phase: d.Phase, Message: d.Message,
			Checks: decodeResult(d).Checks, LiveURL: d.LiveURL}, `{"project":"shop","name":"api","environment":"staging","deployment_id":7,"revision":"main@sha1:abc","phase":"running","message":"m","checks":[{"name":"sync","state":"pending","attempts":0},{"name":"readiness","state":"pending","attempts":0},{"name":"reachability","state":"pending","attempts":0}],"live_url":"https://x/"}`},
		{map[string]any{"deployments": []DeploymentView{deploymentView(d), deploymentView(store.Deployment{ID: 1, App: layout.AppRef{Project: "p", Name: "a"}})},
			"next_cursor": ""}, `{"deployments":[{"id":7,"project":"shop","app":"api","environment":"staging","revision":"main@sha1:abc","spec_revision":"0123","started_at":"2025-03-01T12:00:00Z","finished_at":"2025-03-01T12:01:00Z","updated_at":"2025-03-01T12:00:00Z","phase":"running","message":"m","components":[{"name":"web","kind":"Kustomization","health":"healthy","reason":"r","message":"m","updated_at":"2025-03-01T12:00:00Z"}],"live_url":"https://x/","checks":{"checks":[{"name":"sync","state":"pending","attempts":0},{"name":"readiness","state":"pending","attempts":0},{"name":"reachability","state":"pending","attempts":0}],"live_url":"https://x/"}},{"id":1,"project":"p","app":"a","revision":"","started_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z","phase":"","components":null,"checks":{"checks":[{"name":"sync","state":"pending","attempts":0},{"name":"readiness","state":"pending","attempts":0},{"name":"reachability","state":"pending","attempts":0}]}}],"next_cursor":""}`},
		{c, `{"seq":9,"project":"shop","app":"api","environment":"staging","deployment_id":7,"revision":"main@sha1:abc","from":"deploying","to":"running","message":"m","at":"2025-03-01T12:00:00Z"}`},
		{ingestResponse{Status: "applied", EventID: 3, DeploymentID: 7, Project: "shop", App: "api", Environment: "staging"}, `{"status":"applied","event_id":3,"deployment_id":7,"project":"shop","app":"api","environment":"staging"}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("answer %d (%T):\n got %s\nwant %s", i, tc.v, b, tc.want)
		}
	}
}
