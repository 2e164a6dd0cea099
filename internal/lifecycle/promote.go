package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// EnvironmentDeployments lists an app's deployments in one environment,
// newest first: what api.Client.DeploymentsIn answers.
type EnvironmentDeployments interface {
	DeploymentsIn(ctx context.Context, project, name, environment string, max int) ([]api.Deployment, error)
}

// maxVerdictDeployments bounds how far back Verdict looks for the
// deployment of a release.
const maxVerdictDeployments = 200

// The checks a release must have passed (or skipped, where they do not
// apply) to be promoted, in the order the webhook runs them.
var verdictChecks = []string{"sync", "readiness", "reachability"}

// Verdict is whether the release of an app at specRevision may be
// promoted out of environment env: the webhook's newest deployment of the
// app there for that spec revision is running with every check green.
// A release it may not promote is a *RefusedError saying why.
func Verdict(ctx context.Context, d EnvironmentDeployments, app layout.AppRef, env, specRevision string) (*api.Deployment, error) {
	if specRevision == "" {
		return nil, refuse("%s in %s records no spec revision: the webhook cannot say whether it ran", app.Ref(), env)
	}
	deps, err := d.DeploymentsIn(ctx, app.Project, app.Name, env, maxVerdictDeployments)
	if err != nil {
		return nil, fmt.Errorf("asking the webhook about %s in %s: %w", app.Ref(), env, err)
	}
	for i := range deps {
		dep := &deps[i]
		if dep.Environment != "" && dep.Environment != env {
			continue // a webhook that does not filter by environment
		}
		if dep.SpecRevision != specRevision {
			continue
		}
		if dep.Phase != "running" {
			return dep, refuse("%s at %s is %s in %s (deployment %d%s), not running", app.Ref(), short(specRevision), dep.Phase, env, dep.ID, message(dep.Message))
		}
		if bad := notGreen(dep.Checks); bad != "" {
			return dep, refuse("%s at %s runs in %s (deployment %d), but %s", app.Ref(), short(specRevision), env, dep.ID, bad)
		}
		return dep, nil
	}
	return nil, refuse("the webhook knows no deployment of %s at %s in %s: it has not run there yet", app.Ref(), short(specRevision), env)
}

func message(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

// notGreen says which of the deployment's checks is not green (passed, or
// skipped where it does not apply), "" when all are.
func notGreen(raw json.RawMessage) string {
	var res struct {
		Checks []struct {
			Name    string `json:"name"`
			State   string `json:"state"`
			Message string `json:"message"`
		} `json:"checks"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &res) != nil || len(res.Checks) == 0 {
		return "the webhook reports no checks for it"
	}
	var bad []string
	for _, name := range verdictChecks {
		found := false
		for _, c := range res.Checks {
			if c.Name != name {
				continue
			}
			found = true
			if c.State != "passed" && c.State != "skipped" {
				bad = append(bad, fmt.Sprintf("check %s is %s%s", name, c.State, message(c.Message)))
			}
		}
		if !found {
			bad = append(bad, "check "+name+" has no result")
		}
	}
	return strings.Join(bad, "; ")
}
