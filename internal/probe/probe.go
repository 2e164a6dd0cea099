package probe

import (
	"context"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// State is the state of a check, or of one item of a check.
type State string

// The states.
const (
	// StatePending: the check has not run yet.
	StatePending State = "pending"
	// StateProgressing: the check ran and is not green yet; it will be retried.
	StateProgressing State = "progressing"
	// StatePassed: the check is green.
	StatePassed State = "passed"
	// StateFailed: the check failed and retrying will not help (or the timeout passed).
	StateFailed State = "failed"
	// StateSkipped: the check does not apply (no cluster, no Ingress, paused app).
	StateSkipped State = "skipped"
	// StateGone: none of the objects the check looks at is left in the
	// cluster, or every one of them is being deleted. A caller that knows the
	// app was there reads it as the app's deletion.
	StateGone State = "gone"
)

// Green reports whether the state lets the next check run.
func (s State) Green() bool { return s == StatePassed || s == StateSkipped }

// Check names, in the order they run.
const (
	CheckSync         = "sync"
	CheckReadiness    = "readiness"
	CheckReachability = "reachability"
)

// CheckNames lists the checks in the order they run.
func CheckNames() []string { return []string{CheckSync, CheckReadiness, CheckReachability} }

// Check is the latest result of one check.
type Check struct {
	Name       string            `json:"name"`
	State      State             `json:"state"`
	Message    string            `json:"message,omitempty"`
	Attempts   int               `json:"attempts"`
	CheckedAt  time.Time         `json:"checked_at,omitzero"`
	Duration   time.Duration     `json:"duration_ns,omitempty"`
	Components []ComponentStatus `json:"components,omitempty"`
	Endpoints  []Endpoint        `json:"endpoints,omitempty"`
}

// ComponentStatus is what one check saw of one component's object.
type ComponentStatus struct {
	Component string `json:"component"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	State     State  `json:"state"`
	Message   string `json:"message,omitempty"`
	// Revision is a Kustomization's last applied revision.
	Revision string `json:"revision,omitempty"`
	// SpecRevision is the apps-repo commit named by a Kustomization's
	// spec-revision annotation, set only once that annotation is known to be
	// the target revision's (see Prober.Sync).
	SpecRevision string `json:"spec_revision,omitempty"`
	// Source is the OCIRepository a Kustomization reads ("" for any other
	// source), and Artifact the artifact revision (sha256:<hex>) the target
	// revision pins it to, set only once known to be the target revision's.
	Source   string `json:"source,omitempty"`
	Artifact string `json:"artifact,omitempty"`
	// ProjectSource is the OCIRepository of the artifact the component's
	// Flux objects are applied from, when a Kustomization reading it
	// applies them (a source per project: "OCIRepository/project-<p>"),
	// and ProjectArtifact the artifact revision the target revision pins
	// it to, set only once known to be the target revision's.
	ProjectSource   string `json:"project_source,omitempty"`
	ProjectArtifact string `json:"project_artifact,omitempty"`
	// Moved: a later fleet revision changed the component's OCIRepository,
	// so the target revision's objects are no longer in the cluster (the
	// later revision's deployment takes over).
	Moved bool `json:"moved,omitempty"`
	// Images are the container images of a workload's pod template (as
	// render pins them: by digest), in the order its containers list them.
	Images []string `json:"images,omitempty"`
	// Replica counts of a Deployment.
	Desired   *int32 `json:"desired,omitempty"`
	Updated   *int32 `json:"updated,omitempty"`
	Available *int32 `json:"available,omitempty"`
}

// Endpoint is the result of one request to one Ingress host.
type Endpoint struct {
	Host       string        `json:"host"`
	URL        string        `json:"url"`
	State      State         `json:"state"`
	StatusCode int           `json:"status_code,omitempty"`
	Latency    time.Duration `json:"latency_ns,omitempty"`
	Error      string        `json:"error,omitempty"`
	TLS        *TLSInfo      `json:"tls,omitempty"`
}

// TLSInfo describes the certificate an endpoint served.
type TLSInfo struct {
	Subject      string    `json:"subject"`
	Issuer       string    `json:"issuer"`
	DNSNames     []string  `json:"dns_names,omitempty"`
	NotAfter     time.Time `json:"not_after"`
	DaysToExpiry int       `json:"days_to_expiry"`
	Verified     bool      `json:"verified"`
	Warning      string    `json:"warning,omitempty"`
}

// Target names the deployment to check.
type Target struct {
	App      layout.AppRef
	Revision string
	// Namespace of the app's workloads; default ProjectNamespace of the
	// app's project.
	Namespace string
	// FluxNamespace holds the Flux Kustomizations of apps that do not
	// have them in their project's namespace; default flux-system.
	FluxNamespace string
	// Artifacts holds, by Kustomization name, the artifact revision the
	// target revision is known to pin the OCIRepository of that
	// Kustomization to (what earlier checks and the events recorded). It
	// lets the sync check judge a component once the Kustomization that
	// applies it has moved on to a later revision that left it as it was.
	Artifacts map[string]string
}

func (t Target) namespace() string {
	if t.Namespace != "" {
		return t.Namespace
	}
	return ProjectNamespace(t.App.Project)
}

// ProjectNamespace is the namespace of a project's workloads (and, where
// render puts them there, of its Flux objects): render names it after the
// project.
func ProjectNamespace(project string) string { return project }

// kustomizationNamespaces are where the app's Flux Kustomizations may
// live: its project's namespace (its workloads'), and the Flux namespace.
func (t Target) kustomizationNamespaces() []string {
	if ns := t.namespace(); ns != "" && ns != t.fluxNamespace() {
		return []string{ns, t.fluxNamespace()}
	}
	return []string{t.fluxNamespace()}
}

func (t Target) fluxNamespace() string {
	if t.FluxNamespace != "" {
		return t.FluxNamespace
	}
	return "flux-system"
}

// SpecRevision returns the spec revision the check's components agree on:
// the SpecRevision of every component that has one, or "" when none has one
// or two of them differ.
func (c Check) SpecRevision() string {
	rev := ""
	for _, cs := range c.Components {
		switch {
		case cs.SpecRevision == "":
		case rev == "":
			rev = cs.SpecRevision
		case rev != cs.SpecRevision:
			return ""
		}
	}
	return rev
}

// MovedOn reports whether the check is held back only by components a
// later fleet revision changed (ComponentStatus.Moved).
func (c Check) MovedOn() bool {
	moved := false
	for _, cs := range c.Components {
		switch {
		case cs.Moved:
			moved = true
		case !cs.State.Green():
			return false
		}
	}
	return moved
}

// Result is the state of all three checks of a deployment.
type Result struct {
	Checks []Check `json:"checks"`
	// Paused: every Deployment of the app is scaled to zero by its spec.
	Paused bool `json:"paused,omitempty"`
	// TimedOut: the deadline passed before every check was green.
	TimedOut bool `json:"timed_out,omitempty"`
	// Timeout is the app's timeout read from its Kustomizations (0: unknown).
	Timeout time.Duration `json:"-"`
	// LiveURL is the first reachable Ingress URL.
	LiveURL string `json:"live_url,omitempty"`
}

// NewResult returns a Result with every check pending.
func NewResult() Result {
	r := Result{}
	for _, n := range CheckNames() {
		r.Checks = append(r.Checks, Check{Name: n, State: StatePending})
	}
	return r
}

// Check returns the named check.
func (r Result) Check(name string) Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return Check{Name: name, State: StatePending}
}

// AllGreen reports whether every check passed or was skipped.
func (r Result) AllGreen() bool {
	if len(r.Checks) == 0 {
		return false
	}
	for _, c := range r.Checks {
		if !c.State.Green() {
			return false
		}
	}
	return true
}

// Failed returns the first failed check, if any.
func (r Result) Failed() (Check, bool) {
	for _, c := range r.Checks {
		if c.State == StateFailed {
			return c, true
		}
	}
	return Check{}, false
}

// Blocking returns the first check that is not green.
func (r Result) Blocking() (Check, bool) {
	for _, c := range r.Checks {
		if !c.State.Green() {
			return c, true
		}
	}
	return Check{}, false
}

// Checker runs one attempt of each check.
type Checker interface {
	Sync(ctx context.Context, t Target) (c Check, timeout time.Duration)
	Readiness(ctx context.Context, t Target) (c Check, paused bool)
	Reachability(ctx context.Context, t Target) (c Check, liveURL string)
}

// Clock is the time source of a Runner and of the TLS checks.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// After returns time.After.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
