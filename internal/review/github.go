package review

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fleetwright/fleetwright/internal/github"
)

// Event is what a review takes from a GitHub pull_request event: the pull
// request's number and its base and head commits.
type Event struct {
	Number     int
	Base, Head string
}

// ReadEvent reads the event file of a GitHub Actions job
// ($GITHUB_EVENT_PATH). No file, a file that cannot be read and another
// event than pull_request give the zero Event: the flags must then say.
func ReadEvent(file string) Event {
	var ev struct {
		PullRequest struct {
			Number int `json:"number"`
			Base   struct {
				SHA string `json:"sha"`
			} `json:"base"`
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if file == "" {
		return Event{}
	}
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &ev) != nil {
		return Event{}
	}
	pr := ev.PullRequest
	return Event{Number: pr.Number, Base: pr.Base.SHA, Head: pr.Head.SHA}
}

// MaxStepSummary keeps the job's step summary under GitHub's 1 MiB limit.
const MaxStepSummary = 1000 << 10

// StepSummary is the job summary of a review: the comment body, followed
// by the full diff when there is one and both fit in MaxStepSummary.
func StepSummary(body, fullDiff string) string {
	if len(fullDiff) > 0 && len(body)+len(fullDiff) < MaxStepSummary {
		return body + "\n### Full diff\n\n" + fenced("diff", fullDiff)
	}
	return body
}

// Post keeps the review comment of pull request pr up to date: one
// comment, found by Marker, edited in place when body changed.
func Post(ctx context.Context, c github.Commenter, repo github.Repo, pr int, body string) (github.Comment, error) {
	cm, err := c.UpsertComment(ctx, repo, pr, Marker, body)
	if err != nil {
		return cm, fmt.Errorf("posting the review comment: %w", err)
	}
	return cm, nil
}
