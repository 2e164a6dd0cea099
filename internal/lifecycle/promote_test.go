package lifecycle_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// TestVerdict asks a real HTTP server that answers as the webhook's API
// does (api.DeploymentPage, filtered by ?environment=) whether a release
// may be promoted out of staging: only the newest deployment of its spec
// revision there counts, and only running with every check green passes.
func TestVerdict(t *testing.T) {
	t.Parallel()
	const rev, other = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	green := `{"checks":[{"name":"sync","state":"passed"},{"name":"readiness","state":"passed"},{"name":"reachability","state":"skipped"}]}`
	dep := func(id int64, env, specRev, phase, checks string) api.Deployment {
		return api.Deployment{ID: id, Project: "shop", App: "api", Environment: env, SpecRevision: specRev, Phase: api.Phase(phase),
			StartedAt: time.Unix(1700000000+id, 0).UTC(), Checks: json.RawMessage(checks)}
	}
	for _, c := range []struct {
		name   string
		deps   []api.Deployment // newest first, every environment
		refuse string           // "" passes
	}{
		{"running and green", []api.Deployment{dep(3, "staging", rev, "running", green)}, ""},
		{"newest of the revision counts", []api.Deployment{dep(5, "staging", other, "failed", `{}`), dep(4, "staging", rev, "running", green), dep(2, "staging", rev, "failed", `{}`)}, ""},
		{"newest of the revision failed", []api.Deployment{dep(4, "staging", rev, "failed", green), dep(2, "staging", rev, "running", green)}, "is failed in staging"},
		{"degraded", []api.Deployment{dep(4, "staging", rev, "degraded", green)}, "is degraded in staging"},
		{"a check failed", []api.Deployment{dep(4, "staging", rev, "running", `{"checks":[{"name":"sync","state":"passed"},{"name":"readiness","state":"passed"},{"name":"reachability","state":"failed","message":"certificate expired"}]}`)}, "check reachability is failed: certificate expired"},
		{"a check missing", []api.Deployment{dep(4, "staging", rev, "running", `{"checks":[{"name":"sync","state":"passed"}]}`)}, "check readiness has no result"},
		{"no checks", []api.Deployment{dep(4, "staging", rev, "running", `null`)}, "no checks"},
		{"ran only in production", []api.Deployment{dep(4, "production", rev, "running", green)}, "no deployment of shop/api at 111111111111 in staging"},
		{"never ran", []api.Deployment{dep(4, "staging", other, "running", green)}, "has not run there yet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/apps/shop/api/deployments" || r.Header.Get("Authorization") != "Bearer tok" {
					http.Error(w, `{"error":"unexpected request"}`, http.StatusBadRequest)
					return
				}
				env := r.URL.Query().Get("environment")
				page := api.DeploymentPage{Deployments: []api.Deployment{}}
				for _, d := range c.deps {
					if env == "" || d.Environment == env {
						page.Deployments = append(page.Deployments, d)
					}
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(page)
			}))
			defer srv.Close()
			client, err := api.NewClient(srv.URL, "tok", srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			_, err = lifecycle.Verdict(t.Context(), client, layout.AppRef{Project: "shop", Name: "api"}, "staging", rev)
			var refused *lifecycle.RefusedError
			switch {
			case c.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refuse != "" && (!errors.As(err, &refused) || !strings.Contains(err.Error(), c.refuse)):
				t.Fatalf("got %v, want a refusal saying %q", err, c.refuse)
			}
		})
	}
}
