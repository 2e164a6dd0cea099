package verify

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"

	"github.com/fleetwright/fleetwright/internal/diag"
)

// Severity of a finding.
type Severity = diag.Severity

// Severities. Only errors fail a run; infos say what was skipped.
const (
	SeverityError   = diag.Error
	SeverityWarning = diag.Warning
	SeverityInfo    = diag.Info
)

// Check names a family of findings.
type Check string

// The checks verify runs.
const (
	CheckSpec         Check = "spec"           // the apps repository's specs are invalid
	CheckDrift        Check = "drift"          // the fleet differs from what the specs render to
	CheckYAML         Check = "yaml"           // a fleet file is not valid YAML
	CheckBuild        Check = "build"          // a Flux Kustomization's path does not build
	CheckDeps         Check = "depends-on"     // dependsOn names nothing, or the graph has a cycle
	CheckAPI          Check = "api"            // an object is not valid for its API type
	CheckKind         Check = "kind"           // an object's kind is unknown
	CheckDuplicate    Check = "duplicate"      // two Kustomizations apply the same object
	CheckArtifact     Check = "artifact"       // a component's or project's artifact is not its folder's files
	CheckProjects     Check = "project-source" // an app's Flux objects and its project's source disagree
	CheckSecret       Check = "secret"         // a secret in plain text
	CheckEnvRef       Check = "env-ref"        // a $(NAME) in an env value that Kubernetes does not expand
	CheckPodSecurity  Check = "pod-security"   // pods the namespace's Pod Security Admission would refuse
	CheckDryRun       Check = "dry-run"        // the cluster rejects an object
	CheckLiveDrift    Check = "live-drift"     // the cluster's object differs from the fleet's
	CheckLiveHandover Check = "live-handover"  // Flux would delete an object on its way to another Kustomization
)

// Policy checks, named as in platform.yaml's policy section.
const (
	CheckRequireDigests     Check = "policy/require_digests"
	CheckForbidLatest       Check = "policy/forbid_latest"
	CheckRequireRequests    Check = "policy/require_requests"
	CheckRequireTLS         Check = "policy/require_tls"
	CheckRequireProbes      Check = "policy/require_probes"
	CheckProductionReplicas Check = "policy/production_replicas"
)

// Finding is one thing verify reports, pointing into the fleet. Its
// diagnostic says where and what: File is the file's path as shown to the
// user (under the fleet folder as given, or the apps repository for spec
// findings), Object the Kind/name of the object the finding is about, and
// Path the field path inside the object, such as
// spec.template.spec.containers[0].image. Its Code and Detail stay empty:
// Check and Diff hold them, and Output fills them in.
type Finding struct {
	diag.Diagnostic
	Check Check
	// Diff is a unified diff, for drift.
	Diff string
	// Live drift: the rendered and the cluster's value of Path (secret
	// values masked), and whether Flux can restore it.
	Desired, Observed, Class string
}

// findingJSON is a finding as verify --format json prints it: the check
// first, the field path as field, and only the position it has.
type findingJSON struct {
	Check    Check    `json:"check"`
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
	Object   string   `json:"object,omitempty"`
	Field    string   `json:"field,omitempty"`
	Message  string   `json:"message"`
	Diff     string   `json:"diff,omitempty"`
	Desired  string   `json:"desired,omitempty"`
	Observed string   `json:"observed,omitempty"`
	Class    string   `json:"class,omitempty"`
}

// MarshalJSON writes the finding as findingJSON says.
func (f Finding) MarshalJSON() ([]byte, error) {
	return json.Marshal(findingJSON{
		Check: f.Check, Severity: f.Severity, File: f.File, Line: f.Line, Column: f.Column, Object: f.Object, Field: f.Path,
		Message: f.Message, Diff: f.Diff, Desired: f.Desired, Observed: f.Observed, Class: f.Class,
	})
}

// Live drift classes.
const (
	ClassSafe    = "safe to reconcile"
	ClassBlocked = "blocked"
)

// String formats the finding as file:line: Kind/name: field: message.
func (f *Finding) String() string { return f.Text(diag.LineOnly) }

// printed is the finding as verify prints it: its check as the code, its
// diff as the detail.
func (f *Finding) printed() *diag.Diagnostic {
	d := f.Diagnostic
	d.Code, d.Detail = string(f.Check), f.Diff
	return &d
}

// sortFindings orders findings by file, line, column, check and message,
// and drops exact duplicates.
func sortFindings(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Check, b.Check), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Message, b.Message), cmp.Compare(a.Severity.Rank(), b.Severity.Rank()),
		)
	})
	return slices.CompactFunc(fs, func(a, b Finding) bool {
		return a.Check == b.Check && a.String() == b.String() && a.Diff == b.Diff
	})
}

// sink gathers findings from many goroutines.
type sink struct {
	mu   sync.Mutex
	list []Finding
}

func (s *sink) add(fs ...Finding) {
	if len(fs) == 0 {
		return
	}
	s.mu.Lock()
	s.list = append(s.list, fs...)
	s.mu.Unlock()
}
