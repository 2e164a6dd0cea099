package render

import (
	"context"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Validation gathers what validating one or more apps repositories found.
type Validation struct {
	// Problems are the problems of every repository added.
	Problems load.Problems
	// Apps and Components count what the repositories hold (an app in two
	// environments is one app); Copies counts the apps per environment.
	Apps, Copies, Components int

	seen map[string]bool
}

// Add loads and validates the apps repository at root, unless it was
// added already.
func (v *Validation) Add(ctx context.Context, root string) error {
	if v.seen[root] {
		return nil
	}
	if v.seen == nil {
		v.seen = map[string]bool{}
	}
	v.seen[root] = true
	repo, ps, err := Load(ctx, Dir(root))
	if err != nil {
		return err
	}
	v.Problems = append(v.Problems, ps...)
	v.Problems = append(v.Problems, checkBuildSecrets(root, repo)...)
	s := summarize(repo.Apps)
	v.Apps += s.Apps
	v.Copies += s.Copies
	seen := map[string]bool{}
	for _, a := range repo.Apps {
		if !seen[a.File] {
			seen[a.File] = true
			v.Components += len(a.Spec.Components)
		}
	}
	return nil
}

// Errors counts the problems that are not warnings.
func (v *Validation) Errors() int {
	n := 0
	for _, p := range v.Problems {
		if p.Severity != diag.Warning {
			n++
		}
	}
	return n
}
