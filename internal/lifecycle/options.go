package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// Options are what every verb takes: where the apps repository is, which
// app it is about, and the environment.
type Options struct {
	// Repo is the apps repository, or a folder inside it, as the user
	// named it; messages show paths under it. Empty means ".".
	Repo string
	// App selects the app: NAME, PROJECT/NAME or CLUSTER/PROJECT/NAME.
	// New does not use it.
	App string
	// Getenv reads GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL and GITHUB_ACTIONS
	// when Apply picks a commit author, and SOURCE_DATE_EPOCH for the
	// clock (default: none set).
	Getenv func(string) string
	// Now dates commits (default: $SOURCE_DATE_EPOCH when it is set, else
	// time.Now).
	Now func() time.Time
	// Logger receives warnings and the progress of Git (default: discard).
	Logger *slog.Logger
	// Deployments, when set, is where History and Rollback read the
	// deployments of the app.
	Deployments DeploymentLister
	// Environment, when set, is the environment (platform.yaml
	// environments) History and Rollback are about: the app is the one
	// in the environment's cluster, and the deployments are those the
	// webhook recorded in that environment only.
	Environment string
}

// DeploymentLister lists the deployments of an app in an environment
// (all of them when environment is empty), newest first; max > 0 stops at
// that many. *api.Client is one.
type DeploymentLister interface {
	DeploymentsIn(ctx context.Context, project, name, environment string, max int) ([]api.Deployment, error)
}

func (o Options) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// now is the clock of commits: Now, else the one of SOURCE_DATE_EPOCH,
// else nil for time.Now.
func (o Options) now() func() time.Time {
	if o.Now != nil {
		return o.Now
	}
	s := o.getenv("SOURCE_DATE_EPOCH")
	n, err := strconv.ParseInt(s, 10, 64)
	if s == "" || err != nil {
		return nil
	}
	return func() time.Time { return time.Unix(n, 0).UTC() }
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o Options) repo() string {
	if o.Repo == "" {
		return "."
	}
	return o.Repo
}

// RefusedError is a change the apps repository refuses, or a name it does
// not hold: an app, component, template parameter, commit or deployment
// that is not there, a file that already exists, a spec that does not
// parse. Any other error is in what was asked (an app selector that is
// malformed or names several apps, no commit author, no Git work tree) or
// in reading and writing files.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

func refuse(format string, args ...any) error {
	return &RefusedError{Err: fmt.Errorf(format, args...)}
}

func refused(err error) error { return &RefusedError{Err: err} }

// InvalidError is a change that would make the specs invalid: Problems
// lists the errors it makes (in the files it writes, or new elsewhere).
type InvalidError struct {
	Problems load.Problems
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("the change would make the specs invalid (%d problem(s))", len(e.Problems))
}

// InUseError refuses to delete an app whose exports other apps take.
type InUseError struct {
	App string // project/name
	// Users are the env vars that take the exports, as file:line:col lines.
	Users []string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s cannot be deleted: other apps use its exports: %s", e.App, strings.Join(e.Users, "; "))
}

// ErrNoDeployment is returned when a deployment id is not in the history.
var ErrNoDeployment = errors.New("no such deployment")
