package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v81/github"
)

// DeploymentReporter records deployments of a repository on GitHub and
// reports how they are going, as the webhook does for each fleet revision
// of an app.
type DeploymentReporter interface {
	// CreateDeployment creates a deployment and returns its ID.
	CreateDeployment(ctx context.Context, repo Repo, d Deployment) (int64, error)
	// SetDeploymentStatus posts a status on the deployment id; the newest
	// status is the deployment's state.
	SetDeploymentStatus(ctx context.Context, repo Repo, id int64, s DeploymentStatus) error
}

var _ DeploymentReporter = (*Client)(nil)

// Deployment is a deployment to create. It records what was deployed: it
// has the task "deploy", never merges the default branch into Ref and
// waits for no commit status.
type Deployment struct {
	// Ref is the commit (or branch or tag) deployed.
	Ref string
	// Environment names where it goes: "project/app", or the name of the
	// platform's environment (where GitHub's environment protection rules
	// apply).
	Environment string
	Description string
	// Payload is extra data kept with the deployment.
	Payload map[string]string
}

// DeploymentStatus is one status of a deployment.
type DeploymentStatus struct {
	// State is one of "in_progress", "success", "failure", "error",
	// "inactive", "queued" and "pending".
	State       string
	Description string
	// EnvironmentURL, when set, links the deployed app.
	EnvironmentURL string
	// KeepOthersActive turns off GitHub's auto_inactive: a success then
	// leaves the environment's earlier deployments as they are (an
	// environment that many apps share; each app retires its own).
	KeepOthersActive bool
}

// CreateDeployment creates a deployment of repo.
func (c *Client) CreateDeployment(ctx context.Context, repo Repo, d Deployment) (int64, error) {
	req := &gh.DeploymentRequest{
		Ref:              gh.Ptr(d.Ref),
		Task:             gh.Ptr("deploy"),
		AutoMerge:        gh.Ptr(false),
		RequiredContexts: &[]string{},
		Environment:      gh.Ptr(d.Environment),
		Description:      gh.Ptr(d.Description),
	}
	if d.Payload != nil {
		req.Payload = d.Payload
	}
	dep, _, err := c.gh.Repositories.CreateDeployment(ctx, repo.Owner, repo.Name, req)
	if err != nil {
		return 0, fmt.Errorf("creating deployment of %s on %s: %w", d.Ref, repo, err)
	}
	c.log.Info("created deployment", "repo", repo.String(), "environment", d.Environment, "deployment", dep.GetID())
	return dep.GetID(), nil
}

// SetDeploymentStatus posts a status on the deployment id of repo.
func (c *Client) SetDeploymentStatus(ctx context.Context, repo Repo, id int64, s DeploymentStatus) error {
	req := &gh.DeploymentStatusRequest{
		State:       gh.Ptr(s.State),
		Description: gh.Ptr(s.Description),
	}
	if s.EnvironmentURL != "" {
		req.EnvironmentURL = gh.Ptr(s.EnvironmentURL)
	}
	if s.KeepOthersActive {
		req.AutoInactive = gh.Ptr(false)
	}
	if _, _, err := c.gh.Repositories.CreateDeploymentStatus(ctx, repo.Owner, repo.Name, id, req); err != nil {
		return fmt.Errorf("posting status %s on deployment %d of %s: %w", s.State, id, repo, err)
	}
	return nil
}

// IsServerError reports whether err is GitHub answering with a server
// error (5xx), which a later attempt may not meet.
func IsServerError(err error) bool {
	var e *gh.ErrorResponse
	return errors.As(err, &e) && e.Response != nil && e.Response.StatusCode >= http.StatusInternalServerError
}
