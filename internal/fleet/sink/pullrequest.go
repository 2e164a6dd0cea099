package sink

import (
	"context"
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/github"
)

// PullRequest lands the fleet as the one pull request of a head branch:
// Push (whose Head names that branch) rebuilds and pushes the branch, then
// the pull request from it to the fleet branch is opened, or its title and
// body brought up to date, from the commit message. A fleet already on the
// fleet branch opens nothing. With Push.DryRun it compares with the fleet
// branch and asks GitHub nothing.
type PullRequest struct {
	Push *Push
	// GitHub opens and edits pull requests of Repo, the fleet repository.
	GitHub github.PullRequester
	Repo   github.Repo
}

var _ Sink = (*PullRequest)(nil)

// Land pushes the head branch and makes sure its pull request is open.
func (p *PullRequest) Land(ctx context.Context, f *generate.Fleet) (Result, error) {
	res, err := p.Push.Land(ctx, f)
	if err != nil || p.Push.DryRun || res.Empty() {
		return res, err
	}
	subject, body, _ := strings.Cut(res.Message, "\n")
	pr, err := p.GitHub.EnsurePullRequest(ctx, p.Repo, p.Push.Head, p.Push.Branch, subject, strings.TrimSpace(body))
	if err != nil {
		return res, fmt.Errorf("opening the fleet pull request: %w", err)
	}
	res.PullRequest = &pr
	return res, nil
}
