package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// ErrNotFound is returned when an app or deployment does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a phase transition names a phase the
// deployment is no longer in (another writer moved it first).
var ErrConflict = errors.New("phase changed meanwhile")

// Phase is the lifecycle phase of an app or of one of its deployments.
type Phase string

// The phases; docs/webhook.md describes the transitions between them.
const (
	PhasePending   Phase = "pending"
	PhaseDeploying Phase = "deploying"
	PhaseRunning   Phase = "running"
	PhaseDegraded  Phase = "degraded"
	PhaseFailed    Phase = "failed"
	PhasePaused    Phase = "paused"
	// PhaseDeleted: Flux pruned the app; its history is kept.
	PhaseDeleted Phase = "deleted"
)

// Final reports whether a deployment in this phase has finished rolling out.
func (p Phase) Final() bool {
	switch p {
	case PhaseRunning, PhaseFailed, PhasePaused, PhaseDeleted:
		return true
	}
	return false
}

// Event status values.
const (
	// EventApplied marks an event that belongs to an app and its deployment.
	EventApplied = "applied"
	// EventIgnored marks an event that counts for no app: its object
	// belongs to no known app, or may not speak for the app it names
	// (Event.IgnoredReason says which).
	EventIgnored = "ignored"
)

// Event is one Flux event as stored. Body holds the request body verbatim.
type Event struct {
	ID         int64     `json:"id"`
	DedupeKey  string    `json:"-"`
	ReceivedAt time.Time `json:"received_at"`
	EventTime  time.Time `json:"timestamp"`

	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Severity   string `json:"severity"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	Revision   string `json:"revision,omitempty"`
	Controller string `json:"controller,omitempty"`

	// App is the app the event's object belongs to, written
	// "project" and "app" in its JSON (MarshalJSON).
	App          layout.AppRef `json:"-"`
	Component    string        `json:"component,omitempty"`
	SpecRevision string        `json:"spec_revision,omitempty"`
	// Environment is the environment the event's object runs in (its
	// metadata's environment); empty on a platform without environments.
	// The same app in two environments is two histories.
	Environment string `json:"environment,omitempty"`

	// JoinLatest makes the event join the app's newest deployment instead of
	// keying a deployment by Revision (a HelmRelease reports a chart version,
	// not a fleet revision). When the app has no deployment yet, Revision keys one.
	JoinLatest bool `json:"-"`

	// Health and Terminal describe the component's state after this event.
	Health   string `json:"-"`
	Terminal bool   `json:"-"`

	Status       string `json:"status"`
	DeploymentID int64  `json:"deployment_id,omitempty"`
	Body         []byte `json:"-"`
	// IgnoredReason says why the event counts for no app. An event that
	// has one is stored as ignored whatever its App, and without it.
	IgnoredReason string `json:"ignored_reason,omitempty"`
}

// Recorded is the outcome of storing one event.
type Recorded struct {
	EventID       int64
	Duplicate     bool
	DeploymentID  int64
	NewDeployment bool
}

// Component health values derived from events.
const (
	HealthProgressing = "progressing"
	HealthHealthy     = "healthy"
	HealthFailed      = "failed"
)

// ComponentState is what the latest event of one component said.
type ComponentState struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind,omitempty"`
	Health    string    `json:"health"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	Terminal  bool      `json:"terminal,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Deployment is one rollout of an app at one fleet revision.
type Deployment struct {
	ID int64 `json:"id"`
	// App is the app deployed, written "project" and "app" in its JSON
	// (MarshalJSON).
	App          layout.AppRef    `json:"-"`
	Environment  string           `json:"environment,omitempty"`
	Revision     string           `json:"revision"`
	SpecRevision string           `json:"spec_revision,omitempty"`
	StartedAt    time.Time        `json:"started_at"`
	FinishedAt   time.Time        `json:"finished_at,omitzero"`
	UpdatedAt    time.Time        `json:"updated_at"`
	Phase        Phase            `json:"phase"`
	Message      string           `json:"message,omitempty"`
	Components   []ComponentState `json:"components"`
	// Checks holds the probe results as JSON (the webhook owns their shape).
	Checks      json.RawMessage `json:"checks,omitempty"`
	LiveURL     string          `json:"live_url,omitempty"`
	Timeout     time.Duration   `json:"-"`
	GitHubID    int64           `json:"-"`
	GitHubState string          `json:"-"`
}

// Finished reports whether the deployment has ended.
func (d Deployment) Finished() bool { return !d.FinishedAt.IsZero() }

// App is the current state of one app in one environment: the phase of
// its newest deployment there.
type App struct {
	layout.AppRef
	Environment  string    `json:"environment,omitempty"`
	Phase        Phase     `json:"phase"`
	Message      string    `json:"message,omitempty"`
	DeploymentID int64     `json:"deployment_id"`
	Revision     string    `json:"revision"`
	SpecRevision string    `json:"spec_revision,omitempty"`
	LiveURL      string    `json:"live_url,omitempty"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// PhaseChange is one entry of the ordered log of phase changes.
type PhaseChange struct {
	Seq int64 `json:"seq"`
	// App is the app whose deployment changed phase, written "project"
	// and "app" in its JSON (MarshalJSON).
	App          layout.AppRef `json:"-"`
	Environment  string        `json:"environment,omitempty"`
	DeploymentID int64         `json:"deployment_id"`
	Revision     string        `json:"revision"`
	From         Phase         `json:"from,omitempty"`
	To           Phase         `json:"to"`
	Message      string        `json:"message,omitempty"`
	At           time.Time     `json:"at"`
}

// DeploymentUpdate is what the prober writes back to a deployment. The
// component states written by RecordEvents are not touched.
type DeploymentUpdate struct {
	ID int64
	// From, when set, is the phase the deployment must be in for the update
	// to apply: a compare-and-set. When the stored phase differs the update
	// writes nothing and fails with ErrConflict.
	From    Phase
	Phase   Phase
	Message string
	Checks  json.RawMessage
	LiveURL string
	// SpecRevision, when set, replaces the spec revision the events carried
	// (on the deployment, and on the app for its current deployment): it is
	// the one read from the cluster, which events only fill while unknown.
	SpecRevision string
	// NoSpecRevision clears the spec revision instead: the events' guess is
	// known to be wrong (the fleet revision that deleted an app has no spec
	// of it, while its events still name the previous one).
	NoSpecRevision bool
	Timeout        time.Duration
	FinishedAt     time.Time
	UpdatedAt      time.Time
	// Report queues the written state for GitHub in the same transaction
	// (the outbox; see SendOutbox): ReportOnChange when the phase changes,
	// ReportAlways whether or not it does. Restate marks the report to be
	// posted even when GitHub has a status in that state already.
	Report  Report
	Restate bool
}

// Report says when a DeploymentUpdate queues a GitHub report.
type Report int

// The Report values.
const (
	ReportNone Report = iota
	ReportOnChange
	ReportAlways
)

// OutboxEntry is one deployment state queued for GitHub.
type OutboxEntry struct {
	ID           int64
	DeploymentID int64
	App          layout.AppRef
	Environment  string
	Phase        Phase
	Message      string
	LiveURL      string
	Restate      bool
	CreatedAt    time.Time
	// Retried reports that an earlier attempt to send this report began
	// and did not finish: its sender may have died after GitHub took it,
	// so GitHub is to be asked before it is written again.
	Retried bool
}

// Store is the history store.
type Store interface {
	// RecordEvents stores a batch of events in one transaction: each new event
	// (by DedupeKey) is inserted; an event with an app (and no
	// IgnoredReason) creates or joins the
	// deployment of that app and revision and updates its component state.
	// An event's spec revision is recorded on its deployment only while the
	// deployment has none.
	// A new deployment becomes the app's current one (phase pending) and ends
	// the open deployments it supersedes. Results are in input order.
	RecordEvents(ctx context.Context, events []Event, now time.Time) ([]Recorded, error)
	// UpdateDeployment writes probe results and phase, unless u.From names
	// a phase the deployment is no longer in (ErrConflict). When the phase changes
	// it appends a PhaseChange and, for the app's current deployment, moves the
	// app's phase. It returns the change appended, if any. A superseded
	// deployment is left as it is (its history is final).
	UpdateDeployment(ctx context.Context, u DeploymentUpdate) (*PhaseChange, error)
	// SetGitHub records the GitHub deployment id and the last state posted.
	SetGitHub(ctx context.Context, deploymentID, githubID int64, state string) error
	// SendOutbox hands the oldest queued GitHub report of an app in one of
	// slots (see SlotOf; nil: every app) to send, and deletes it once send
	// returns (send reports its own failures). On PostgreSQL the report is
	// locked meanwhile (FOR UPDATE SKIP LOCKED): no two replicas send one
	// report. Before send runs, the attempt is recorded (committed on its
	// own), so that the entry of a sender that died mid-way comes back
	// with Retried set. It returns false when none was queued.
	SendOutbox(ctx context.Context, slots []int, send func(OutboxEntry)) (bool, error)

	Deployment(ctx context.Context, id int64) (Deployment, error)
	// Deployments lists an app's deployments in every environment newest
	// first, with ids below beforeID when beforeID > 0.
	Deployments(ctx context.Context, app layout.AppRef, limit int, beforeID int64) ([]Deployment, error)
	// DeploymentsIn lists an app's deployments in one environment ("":
	// those of no environment) as Deployments does.
	DeploymentsIn(ctx context.Context, app layout.AppRef, env string, limit int, beforeID int64) ([]Deployment, error)
	// ActiveDeployments returns the deployments that are not finished and the
	// current deployment of every app, oldest first.
	ActiveDeployments(ctx context.Context) ([]Deployment, error)

	// Apps lists every app in every environment, by project, name and
	// environment.
	Apps(ctx context.Context) ([]App, error)
	// App returns an app's state in one environment ("": no environment).
	App(ctx context.Context, app layout.AppRef, env string) (App, error)

	// LatestSeq returns the Seq of the newest phase change (0 if none).
	LatestSeq(ctx context.Context) (int64, error)
	// PhaseChanges returns changes with Seq > after, in order.
	PhaseChanges(ctx context.Context, after int64, limit int) ([]PhaseChange, error)
	// AppPhaseChanges returns the phase changes of an app's deployments in
	// one environment with ids from minDeployment to maxDeployment, newest first.
	AppPhaseChanges(ctx context.Context, app layout.AppRef, env string, minDeployment, maxDeployment int64, limit int) ([]PhaseChange, error)
	// Events returns an app's stored events, newest first; with the zero
	// AppRef, the ignored events.
	Events(ctx context.Context, app layout.AppRef, limit int) ([]Event, error)

	// Prune drops the history r does not keep, and the sessions expired at now.
	Prune(ctx context.Context, r Retention, now time.Time) (Pruned, error)

	// CreateSession stores a status page session; Session returns one
	// unless it expired (ErrNotFound); DeleteSession ends one at once;
	// DeleteSessionsOf ends every session of an OIDC subject.
	CreateSession(ctx context.Context, se Session) error
	Session(ctx context.Context, idHash string, now time.Time) (Session, error)
	DeleteSession(ctx context.Context, idHash string) error
	DeleteSessionsOf(ctx context.Context, subject string) (int64, error)

	Ping(ctx context.Context) error
	Close() error
}
