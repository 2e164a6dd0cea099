package githubtest_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
)

// TestDeployments creates a deployment and posts statuses the way the
// webhook does, and checks the answers and what the server keeps.
func TestDeployments(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.WithToken("t0k"))
	srv.Expect("POST", "/repos/acme/fleet/deployments").
		JSONField("environment", "shop/api").JSONField("task", "deploy")
	srv.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Times(2)
	auth := map[string]string{"Authorization": "Bearer t0k"}

	resp, body := do(t, "POST", srv.URL+"repos/acme/fleet/deployments",
		`{"ref":"0123456789abcdef0123456789abcdef01234567","task":"deploy","auto_merge":false,"required_contexts":[],`+
			`"environment":"shop/api","description":"shop/api at main@sha1:0123","payload":{"app":"api"}}`, auth)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create deployment = %d %s", resp.StatusCode, body)
	}
	var dep map[string]any
	if err := json.Unmarshal([]byte(body), &dep); err != nil {
		t.Fatal(err)
	}
	id := int64(dep["id"].(float64))
	for _, k := range []string{"url", "node_id", "sha", "ref", "task", "payload", "environment", "creator", "created_at", "statuses_url", "repository_url"} {
		if _, ok := dep[k]; !ok {
			t.Errorf("deployment lacks %q", k)
		}
	}
	if dep["sha"] != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("sha = %v, want the ref (a full commit)", dep["sha"])
	}
	statuses := dep["statuses_url"].(string)

	for _, b := range []string{
		`{"state":"in_progress","description":"deploying: sync: waiting"}`,
		`{"state":"success","description":"running","environment_url":"https://api.example.com/"}`,
	} {
		resp, body := do(t, "POST", statuses, b, auth)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create status = %d %s", resp.StatusCode, body)
		}
		var st map[string]any
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		if st["deployment_url"] != dep["url"] || st["environment"] != "shop/api" {
			t.Errorf("status JSON = %s", body)
		}
	}

	got := srv.Deployments("acme/fleet")
	want := []githubtest.Deployment{{
		ID: id, Ref: "0123456789abcdef0123456789abcdef01234567", Task: "deploy", Environment: "shop/api",
		Description: "shop/api at main@sha1:0123", Payload: map[string]any{"app": "api"}, Creator: "fleetwright[bot]",
		Statuses: []githubtest.DeploymentStatus{
			{State: "in_progress", Description: "deploying: sync: waiting"},
			{State: "success", Description: "running", EnvironmentURL: "https://api.example.com/"},
		},
	}}
	opts := cmp.Options{
		cmpopts.IgnoreFields(githubtest.Deployment{}, "CreatedAt"),
		cmpopts.IgnoreFields(githubtest.DeploymentStatus{}, "ID", "CreatedAt"),
	}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
	if last, ok := got[0].LastStatus(); !ok || last.State != "success" {
		t.Errorf("LastStatus = %+v, %v", last, ok)
	}
}

func TestDeploymentStrictness(t *testing.T) {
	t.Parallel()
	const create = `{"ref":"main","environment":"shop/api"}`
	tests := []struct {
		name       string
		setup      func(*testing.T, *githubtest.Server)
		path       string
		body       string
		wantStatus int
		wantErrors []string
	}{
		{
			name:       "unknown deployment field",
			setup:      func(_ *testing.T, s *githubtest.Server) { s.Expect("POST", "/repos/acme/fleet/deployments") },
			path:       "repos/acme/fleet/deployments",
			body:       `{"ref":"main","labels":["x"]}`,
			wantStatus: http.StatusUnprocessableEntity,
			wantErrors: []string{`githubtest: POST /repos/acme/fleet/deployments: field "labels" is not a parameter of this endpoint`},
		},
		{
			name:       "deployment without ref",
			setup:      func(_ *testing.T, s *githubtest.Server) { s.Expect("POST", "/repos/acme/fleet/deployments") },
			path:       "repos/acme/fleet/deployments",
			body:       `{"environment":"shop/api"}`,
			wantStatus: http.StatusUnprocessableEntity,
		},
		{
			name:       "status of an unknown deployment",
			setup:      func(_ *testing.T, s *githubtest.Server) { s.Expect("POST", "/repos/acme/fleet/deployments/*/statuses") },
			path:       "repos/acme/fleet/deployments/42/statuses",
			body:       `{"state":"success"}`,
			wantStatus: http.StatusNotFound,
		},
		{
			name:       "invalid state",
			setup:      withDeployment("/repos/acme/fleet/deployments/*/statuses"),
			path:       "repos/acme/fleet/deployments/{id}/statuses",
			body:       `{"state":"running"}`,
			wantStatus: http.StatusUnprocessableEntity,
		},
		{
			name:       "description over 140 characters",
			setup:      withDeployment("/repos/acme/fleet/deployments/*/statuses"),
			path:       "repos/acme/fleet/deployments/{id}/statuses",
			body:       `{"state":"failure","description":"` + strings.Repeat("é", 141) + `"}`,
			wantStatus: http.StatusUnprocessableEntity,
		},
		{
			name:       "environment_url not a URL",
			setup:      withDeployment("/repos/acme/fleet/deployments/*/statuses"),
			path:       "repos/acme/fleet/deployments/{id}/statuses",
			body:       `{"state":"success","environment_url":"api.example.com"}`,
			wantStatus: http.StatusUnprocessableEntity,
		},
		{
			name:       "wildcard matches one segment only",
			setup:      withDeployment("/repos/acme/fleet/deployments/*/statuses"),
			path:       "repos/acme/fleet/deployments/1/2/statuses",
			body:       `{"state":"success"}`,
			wantStatus: http.StatusInternalServerError,
			wantErrors: []string{
				"githubtest: unexpected request POST /repos/acme/fleet/deployments/1/2/statuses",
				"githubtest: expected POST /repos/acme/fleet/deployments/*/statuses 1 time(s), got 0",
			},
		},
		{
			name: "fewer calls than Between's least",
			setup: func(_ *testing.T, s *githubtest.Server) {
				s.Expect("POST", "/repos/acme/fleet/deployments").Between(2, 5)
			},
			path:       "repos/acme/fleet/deployments",
			body:       create,
			wantStatus: http.StatusCreated,
			wantErrors: []string{"githubtest: expected POST /repos/acme/fleet/deployments 2 to 5 time(s), got 1"},
		},
		{
			name: "more calls than Between's most",
			setup: func(_ *testing.T, s *githubtest.Server) {
				s.Expect("POST", "/repos/acme/fleet/deployments").Between(0, 0)
			},
			path:       "repos/acme/fleet/deployments",
			body:       create,
			wantStatus: http.StatusInternalServerError,
			wantErrors: []string{"githubtest: unexpected request POST /repos/acme/fleet/deployments"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{TB: t}
			srv := githubtest.New(rec)
			tc.setup(t, srv)
			path := tc.path
			if strings.Contains(path, "{id}") {
				deps := srv.Deployments("acme/fleet")
				if len(deps) != 1 {
					t.Fatalf("setup made %d deployments", len(deps))
				}
				path = strings.ReplaceAll(path, "{id}", strconv.FormatInt(deps[0].ID, 10))
			}
			resp, body := do(t, "POST", srv.URL+path, tc.body, nil)
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status = %d, want %d (%s)", resp.StatusCode, tc.wantStatus, body)
			}
			rec.runCleanups()
			if diff := cmp.Diff(tc.wantErrors, rec.failures()); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if tc.wantStatus >= 400 {
				for _, d := range srv.Deployments("acme/fleet") {
					if len(d.Statuses) != 0 {
						t.Errorf("a refused status was kept: %+v", d.Statuses)
					}
				}
			}
		})
	}
}

// withDeployment creates one deployment through the API (expected) and
// expects one call of path.
func withDeployment(path string) func(*testing.T, *githubtest.Server) {
	return func(t *testing.T, s *githubtest.Server) {
		s.Expect("POST", "/repos/acme/fleet/deployments")
		s.Expect("POST", path)
		if resp, body := do(t, "POST", s.URL+"repos/acme/fleet/deployments", `{"ref":"main"}`, nil); resp.StatusCode != http.StatusCreated {
			t.Fatalf("create deployment = %d %s", resp.StatusCode, body)
		}
	}
}

func TestMergePullRequest(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	n := srv.AddPullRequest("acme/apps", githubtest.PullRequest{Head: "feature", Base: "main", Title: "t"})
	if !srv.MergePullRequest("acme/apps", n) {
		t.Fatal("MergePullRequest = false for an open pull request")
	}
	if srv.MergePullRequest("acme/apps", n) {
		t.Error("MergePullRequest = true for a closed pull request")
	}
	srv.Expect("GET", "/repos/acme/apps/pulls/1")
	_, body := do(t, "GET", srv.URL+"repos/acme/apps/pulls/1", "", nil)
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got["state"] != "closed" || got["merged_at"] == nil || got["closed_at"] != got["merged_at"] {
		t.Errorf("merged pull request JSON: state %v, merged_at %v, closed_at %v", got["state"], got["merged_at"], got["closed_at"])
	}
	if prs := srv.PullRequests("acme/apps"); prs[0].MergedAt.IsZero() {
		t.Error("PullRequests does not report the merge")
	}
}

// TestDeploymentEnvironmentKinds checks that the server keeps and answers
// a deployment's transient_environment and production_environment, with
// GitHub's default for the latter (true for an environment named
// production).
func TestDeploymentEnvironmentKinds(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.WithToken("t0k"))
	srv.Expect("POST", "/repos/acme/apps/deployments").Times(3)
	auth := map[string]string{"Authorization": "Bearer t0k"}
	const sha = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		body                  string
		transient, production bool
	}{
		{`{"ref":"` + sha + `","environment":"pr-12","transient_environment":true}`, true, false},
		{`{"ref":"` + sha + `","environment":"production"}`, false, true},
		{`{"ref":"` + sha + `","environment":"production","production_environment":false}`, false, false},
	} {
		resp, body := do(t, "POST", srv.URL+"repos/acme/apps/deployments", tc.body, auth)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s = %d %s", tc.body, resp.StatusCode, body)
		}
		var dep map[string]any
		if err := json.Unmarshal([]byte(body), &dep); err != nil {
			t.Fatal(err)
		}
		if dep["transient_environment"] != tc.transient || dep["production_environment"] != tc.production {
			t.Errorf("%s answered %s", tc.body, body)
		}
	}
	deps := srv.Deployments("acme/apps")
	if len(deps) != 3 || !deps[0].Transient || deps[0].Production || !deps[1].Production || deps[2].Production {
		t.Errorf("deployments = %+v", deps)
	}
}
