// Package api holds the webhook's status API as it travels: the plain
// types of its JSON answers and a client of it, with the standard library
// only, so that a program that reads the API (render's history and
// rollback) links none of the server's storage, probes or metrics. The
// server (internal/webhook) converts its own types to these at its edge;
// a test there holds the two to the same JSON.
package api

import (
	"encoding/json"
	"time"
)

// MaxPageSize is the most deployments one page of the history holds.
const MaxPageSize = 100

// Phase is where a deployment is: pending, deploying, running, degraded,
// failed, superseded, deleted.
type Phase string

// Deployment is one rollout of an app at one fleet revision, as
// GET /api/v1/apps/{project}/{name}/deployments lists it.
type Deployment struct {
	ID      int64  `json:"id"`
	Project string `json:"project"`
	App     string `json:"app"`
	// Environment is the environment (platform.yaml environments) the
	// deployment ran in; empty on a platform without environments.
	Environment  string      `json:"environment,omitempty"`
	Revision     string      `json:"revision"`
	SpecRevision string      `json:"spec_revision,omitempty"`
	StartedAt    time.Time   `json:"started_at"`
	FinishedAt   time.Time   `json:"finished_at,omitzero"`
	UpdatedAt    time.Time   `json:"updated_at"`
	Phase        Phase       `json:"phase"`
	Message      string      `json:"message,omitempty"`
	Components   []Component `json:"components"`
	LiveURL      string      `json:"live_url,omitempty"`
	// Checks are the results of the deployment's checks (sync,
	// readiness, reachability), as the server writes them.
	Checks json.RawMessage `json:"checks"`
}

// Component is the state of one component of a deployment.
type Component struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind,omitempty"`
	Health    string    `json:"health"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	Terminal  bool      `json:"terminal,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// DeploymentPage is one answer of GET
// /api/v1/apps/{project}/{name}/deployments.
type DeploymentPage struct {
	Deployments []Deployment `json:"deployments"`
	NextCursor  string       `json:"next_cursor"`
}

// Error is the body of an answer other than 200.
type Error struct {
	Error string `json:"error"`
}
