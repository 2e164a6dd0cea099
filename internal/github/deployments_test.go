package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
)

// TestDeployments creates a deployment and posts two statuses, checking
// every request body and what GitHub then holds.
func TestDeployments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(token))
	const sha = "0123456789abcdef0123456789abcdef01234567"
	srv.Expect("POST", "/repos/acme/fleet/deployments").JSONBody(map[string]any{
		"ref": sha, "task": "deploy", "auto_merge": false, "required_contexts": []any{},
		"environment": "shop/api", "description": "shop/api at main@sha1:0123",
		"payload": map[string]any{"project": "shop", "app": "api"},
	})
	srv.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").
		JSONBody(map[string]any{"state": "in_progress", "description": "deploying"})
	srv.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").
		JSONBody(map[string]any{"state": "success", "description": "running", "environment_url": "https://api.example.com/"})
	c := newClient(t, srv)

	id, err := c.CreateDeployment(ctx, repo, github.Deployment{
		Ref: sha, Environment: "shop/api", Description: "shop/api at main@sha1:0123",
		Payload: map[string]string{"project": "shop", "app": "api"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []github.DeploymentStatus{
		{State: "in_progress", Description: "deploying"},
		{State: "success", Description: "running", EnvironmentURL: "https://api.example.com/"},
	} {
		if err := c.SetDeploymentStatus(ctx, repo, id, s); err != nil {
			t.Fatal(err)
		}
	}

	want := []githubtest.Deployment{{
		ID: id, Ref: sha, Task: "deploy", Environment: "shop/api", Description: "shop/api at main@sha1:0123",
		Payload: map[string]any{"project": "shop", "app": "api"}, Creator: "fleetwright[bot]",
		Statuses: []githubtest.DeploymentStatus{
			{State: "in_progress", Description: "deploying"},
			{State: "success", Description: "running", EnvironmentURL: "https://api.example.com/"},
		},
	}}
	opts := cmp.Options{
		cmpopts.IgnoreFields(githubtest.Deployment{}, "CreatedAt"),
		cmpopts.IgnoreFields(githubtest.DeploymentStatus{}, "ID", "CreatedAt"),
	}
	if diff := cmp.Diff(want, srv.Deployments(repoName), opts); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
}

func TestDeploymentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		path       string
		status     int
		call       func(*github.Client) error
		want       string
		wantServer bool
	}{
		{
			name:   "create, server error",
			path:   "/repos/acme/fleet/deployments",
			status: http.StatusBadGateway,
			call: func(c *github.Client) error {
				_, err := c.CreateDeployment(context.Background(), repo, github.Deployment{Ref: "main", Environment: "shop/api"})
				return err
			},
			want:       "creating deployment of main on acme/fleet: POST",
			wantServer: true,
		},
		{
			name:   "create, refused",
			path:   "/repos/acme/fleet/deployments",
			status: http.StatusUnprocessableEntity,
			call: func(c *github.Client) error {
				_, err := c.CreateDeployment(context.Background(), repo, github.Deployment{Ref: "main", Environment: "shop/api"})
				return err
			},
			want: "creating deployment of main on acme/fleet: POST",
		},
		{
			name:   "status, server error",
			path:   "/repos/acme/fleet/deployments/7/statuses",
			status: http.StatusServiceUnavailable,
			call: func(c *github.Client) error {
				return c.SetDeploymentStatus(context.Background(), repo, 7, github.DeploymentStatus{State: "success"})
			},
			want:       "posting status success on deployment 7 of acme/fleet: POST",
			wantServer: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t)
			srv.Expect("POST", tc.path).Respond(tc.status, map[string]any{"message": "nope"})
			err := tc.call(newClient(t, srv))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to start with %q", err, tc.want)
			}
			if got := github.IsServerError(err); got != tc.wantServer {
				t.Errorf("IsServerError = %v, want %v", got, tc.wantServer)
			}
		})
	}
	for _, err := range []error{nil, errors.New("dial tcp: refused"), fmt.Errorf("wrapped: %w", context.Canceled)} {
		if github.IsServerError(err) {
			t.Errorf("IsServerError(%v) = true", err)
		}
	}
}

// TestReadBackDeployments finds a deployment by ref, environment and
// payload and reads its newest status, as a retried report does.
func TestReadBackDeployments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(token))
	const sha = "0123456789abcdef0123456789abcdef01234567"
	srv.Expect("POST", "/repos/acme/fleet/deployments").Times(3)
	srv.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Times(2)
	srv.Expect("GET", "/repos/acme/fleet/deployments").Query("ref", sha).Query("environment", "shop/api").Times(2)
	srv.Expect("GET", "/repos/acme/fleet/deployments/*/statuses").Times(2)
	c := newClient(t, srv)

	var ids []int64
	for _, d := range []github.Deployment{
		{Ref: sha, Environment: "shop/api", Payload: map[string]string{"app": "api", "revision": "main@sha1:1"}},
		{Ref: sha, Environment: "shop/web", Payload: map[string]string{"app": "web", "revision": "main@sha1:2"}},
		{Ref: sha, Environment: "shop/api", Payload: map[string]string{"app": "api", "revision": "main@sha1:2"}},
	} {
		id, err := c.CreateDeployment(ctx, repo, d)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, tc := range []struct {
		payload map[string]string
		want    int64
	}{
		{map[string]string{"app": "api", "revision": "main@sha1:1"}, ids[0]},
		{map[string]string{"app": "api", "revision": "main@sha1:3"}, 0},
	} {
		got, err := c.FindDeployment(ctx, repo, sha, "shop/api", tc.payload)
		if err != nil || got != tc.want {
			t.Errorf("FindDeployment(%v) = %d, %v; want %d", tc.payload, got, err, tc.want)
		}
	}

	if st, err := c.LastDeploymentStatus(ctx, repo, ids[2]); err != nil || st != (github.DeploymentStatus{}) {
		t.Errorf("LastDeploymentStatus of a deployment without statuses = %+v, %v", st, err)
	}
	for _, s := range []string{"in_progress", "success"} {
		if err := c.SetDeploymentStatus(ctx, repo, ids[2], github.DeploymentStatus{State: s, Description: s}); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := c.LastDeploymentStatus(ctx, repo, ids[2]); err != nil || st.State != "success" || st.Description != "success" {
		t.Errorf("LastDeploymentStatus = %+v, %v; want success", st, err)
	}
}

// TestTransientDeployment creates a pull request's preview deployment:
// GitHub hears transient_environment, and holds the environment as one
// that goes away, not production.
func TestTransientDeployment(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.WithToken(token))
	const sha = "89abcdef0123456789abcdef0123456789abcdef"
	srv.Expect("POST", "/repos/acme/fleet/deployments").JSONBody(map[string]any{
		"ref": sha, "task": "deploy", "auto_merge": false, "required_contexts": []any{},
		"environment": "pr-12", "description": "shop/web in pr-12", "transient_environment": true,
	})
	c := newClient(t, srv)
	if _, err := c.CreateDeployment(context.Background(), repo, github.Deployment{
		Ref: sha, Environment: "pr-12", Description: "shop/web in pr-12", Transient: true,
	}); err != nil {
		t.Fatal(err)
	}
	deps := srv.Deployments(repoName)
	if len(deps) != 1 || !deps[0].Transient || deps[0].Production || deps[0].Environment != "pr-12" {
		t.Errorf("deployments = %+v, want one transient in pr-12", deps)
	}
}
