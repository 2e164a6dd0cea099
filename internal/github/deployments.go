package github

import (
	"context"
	"encoding/json"
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
	// FindDeployment and LastDeploymentStatus read back what an earlier
	// attempt may have written, so that a report retried after its sender
	// died is not written twice.
	FindDeployment(ctx context.Context, repo Repo, ref, environment string, payload map[string]string) (int64, error)
	LastDeploymentStatus(ctx context.Context, repo Repo, id int64) (DeploymentStatus, error)
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
	// Transient marks the environment as one that goes away (a pull
	// request's preview): GitHub shows it apart from the lasting ones.
	Transient bool
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
	if d.Transient {
		req.TransientEnvironment = gh.Ptr(true)
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

// FindDeployment returns the newest deployment of repo at ref in
// environment whose payload holds every key and value of payload (0 when
// there is none among the newest 100). It tells whether a deployment
// that was being created when its creator died reached GitHub.
func (c *Client) FindDeployment(ctx context.Context, repo Repo, ref, environment string, payload map[string]string) (int64, error) {
	deps, _, err := c.gh.Repositories.ListDeployments(ctx, repo.Owner, repo.Name, &gh.DeploymentsListOptions{
		Ref: ref, Environment: environment, Task: "deploy", ListOptions: gh.ListOptions{PerPage: 100},
	})
	if err != nil {
		return 0, fmt.Errorf("listing deployments of %s in %s on %s: %w", ref, environment, repo, err)
	}
	for _, d := range deps {
		var got map[string]any
		if json.Unmarshal(d.Payload, &got) != nil {
			continue
		}
		if payloadHolds(got, payload) {
			return d.GetID(), nil
		}
	}
	return 0, nil
}

func payloadHolds(got map[string]any, want map[string]string) bool {
	for k, v := range want {
		if s, ok := got[k].(string); !ok || s != v {
			return false
		}
	}
	return true
}

// LastDeploymentStatus returns the newest status of deployment id of repo
// (a zero DeploymentStatus when it has none).
func (c *Client) LastDeploymentStatus(ctx context.Context, repo Repo, id int64) (DeploymentStatus, error) {
	sts, _, err := c.gh.Repositories.ListDeploymentStatuses(ctx, repo.Owner, repo.Name, id, &gh.ListOptions{PerPage: 1})
	if err != nil {
		return DeploymentStatus{}, fmt.Errorf("reading the statuses of deployment %d of %s: %w", id, repo, err)
	}
	if len(sts) == 0 {
		return DeploymentStatus{}, nil
	}
	return DeploymentStatus{State: sts[0].GetState(), Description: sts[0].GetDescription(), EnvironmentURL: sts[0].GetEnvironmentURL()}, nil
}
