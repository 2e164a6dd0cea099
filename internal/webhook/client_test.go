package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// recordDeployments stores n deployments of shop/api, one per fleet
// revision, and returns their ids, oldest first.
func recordDeployments(t *testing.T, st *store.SQL, n int) []int64 {
	t.Helper()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var ids []int64
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Hour)
		rev := fmt.Sprintf("main@sha1:%040d", i+1)
		rec, err := st.RecordEvents(t.Context(), []store.Event{{
			DedupeKey: fmt.Sprint("k", i), ReceivedAt: at, EventTime: at,
			Kind: "Kustomization", Namespace: "flux-system", Name: "shop-api-web",
			Severity: "info", Reason: "ReconciliationSucceeded", Message: "Applied revision " + rev,
			Revision: rev, Controller: "kustomize-controller",
			App: layout.AppRef{Project: "shop", Name: "api"}, Component: "web", SpecRevision: fmt.Sprintf("%040x", i+1),
			Health: store.HealthHealthy, Body: []byte(`{}`),
		}}, at)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec[0].DeploymentID)
	}
	return ids
}

func TestClientDeployments(t *testing.T) {
	t.Parallel()
	// The history is older than the retention keeps: no prune at start.
	e := newTestEnv(t, func(c *Config) { c.PruneInterval = -1 })
	ids := recordDeployments(t, e.st, 5)
	c, err := api.NewClient(e.ts.URL+"/", testToken, e.ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	c.PageSize = 2 // three pages

	tests := []struct {
		max  int
		want []int64
	}{
		{0, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{3, []int64{ids[4], ids[3], ids[2]}},
		{9, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
	}
	for _, tt := range tests {
		deps, err := c.Deployments(t.Context(), "shop", "api", tt.max)
		if err != nil {
			t.Fatalf("max %d: %v", tt.max, err)
		}
		var got []int64
		for _, d := range deps {
			got = append(got, d.ID)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("max %d: ids (-want +got):\n%s", tt.max, d)
		}
	}
	deps, err := c.Deployments(t.Context(), "shop", "api", 1)
	if err != nil {
		t.Fatal(err)
	}
	d := deps[0]
	if d.Project != "shop" || d.App != "api" || d.Revision != "main@sha1:"+fmt.Sprintf("%040d", 5) ||
		d.SpecRevision != fmt.Sprintf("%040x", 5) || d.Phase == "" || d.StartedAt.IsZero() {
		t.Errorf("newest deployment = %+v", d)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	recordDeployments(t, e.st, 1)
	tests := []struct {
		name, token, app, want string
	}{
		{"wrong token", "n0t-the-t0ken", "api", "webhook: GET /api/v1/apps/shop/api/deployments: 401 Unauthorized: missing or wrong bearer token"},
		{"no token", "", "api", "401 Unauthorized: missing or wrong bearer token"},
		{"unknown app", testToken, "nope", "webhook: GET /api/v1/apps/shop/nope/deployments: 404 Not Found: no app shop/nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := api.NewClient(e.ts.URL, tt.token, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Deployments(t.Context(), "shop", tt.app, 0)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if tt.token != "" && strings.Contains(fmt.Sprint(err), tt.token) {
				t.Errorf("the token is in the error: %v", err)
			}
		})
	}
	for _, u := range []string{"ftp://example.com", "example.com", "http://", "://x"} {
		if _, err := api.NewClient(u, "", nil); !errors.Is(err, api.ErrNotHTTP) {
			t.Errorf("api.NewClient(%q) = %v, want api.ErrNotHTTP", u, err)
		}
	}
}

// TestWireTypesMatch: a deployment as the server writes it decodes into
// api.Deployment and encodes back to the same JSON, so that the plain
// types render reads with lose or misname nothing.
func TestWireTypesMatch(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	res := probe.NewResult()
	res.LiveURL, res.TimedOut = "https://api-shop.apps.example.com/", true
	checks, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []store.Deployment{
		{ID: 7, App: layout.AppRef{Project: "shop", Name: "api"}, Environment: "staging", Revision: "main@sha1:abc", SpecRevision: "0123", StartedAt: at, FinishedAt: at.Add(time.Minute),
			UpdatedAt: at.Add(2 * time.Minute), Phase: store.PhaseFailed, Message: "sync check failed", LiveURL: "https://x/",
			Components: []store.ComponentState{{Name: "web", Kind: "Kustomization", Health: store.HealthFailed, Reason: "HealthCheckFailed", Message: "m", Terminal: true, UpdatedAt: at}},
			Checks:     checks, Timeout: time.Minute, GitHubID: 3, GitHubState: "failure"},
		{ID: 1, App: layout.AppRef{Project: "p", Name: "a"}, Revision: "r", StartedAt: at, UpdatedAt: at, Phase: store.PhasePending},
	} {
		server, err := json.Marshal(deploymentView(d))
		if err != nil {
			t.Fatal(err)
		}
		var wire api.Deployment
		dec := json.NewDecoder(bytes.NewReader(server))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&wire); err != nil {
			t.Fatalf("the server's deployment does not decode into api.Deployment: %v\n%s", err, server)
		}
		back, err := json.Marshal(wire)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(server, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(back, &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("api.Deployment changes the server's JSON (-server +api):\n%s", diff)
		}
	}
}
