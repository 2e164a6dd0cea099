package review_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/review"
)

func TestReadEvent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file string
		want       review.Event
	}{
		{"pull request", file("pr.json", `{"action":"synchronize","pull_request":{"number":7,"base":{"sha":"b1"},"head":{"sha":"h2"}}}`),
			review.Event{Number: 7, Base: "b1", Head: "h2"}},
		{"push event", file("push.json", `{"ref":"refs/heads/main","after":"h2"}`), review.Event{}},
		{"not JSON", file("bad.json", `{"pull_request":{"number":7,`), review.Event{}},
		{"no such file", filepath.Join(dir, "missing.json"), review.Event{}},
		{"no file", "", review.Event{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := review.ReadEvent(tc.file); got != tc.want {
				t.Errorf("ReadEvent = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStepSummary(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("+x\n", review.MaxStepSummary/3)
	for _, tc := range []struct {
		name, body, diff, want string
	}{
		{"with the diff", "body\n", "-a\n+b\n", "body\n\n### Full diff\n\n```diff\n-a\n+b\n```\n"},
		{"no diff", "body\n", "", "body\n"},
		{"too big for the limit", "body\n", big, "body\n"},
		// A fleet file's line of backticks does not end the block: the
		// rest of the summary is not read as Markdown.
		{"a fence in the diff", "body\n", "+```\n+<!--\n", "body\n\n### Full diff\n\n````diff\n+```\n+<!--\n````\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := review.StepSummary(tc.body, tc.diff); got != tc.want {
				t.Errorf("StepSummary = %.80q, want %.80q", got, tc.want)
			}
		})
	}
}

// TestPost: the first post creates the comment, a later one edits it in
// place, one with the same body writes nothing.
func TestPost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	api := githubtest.New(t, githubtest.WithToken("ghs_reviewtoken"))
	pr := api.AddPullRequest("acme/apps", githubtest.PullRequest{Head: "feature", Base: "main", Title: "bump"})
	c, err := github.New(github.Config{BaseURL: api.URL, Token: "ghs_reviewtoken"})
	if err != nil {
		t.Fatal(err)
	}
	repo := github.Repo{Owner: "acme", Name: "apps"}
	comments := "/repos/acme/apps/issues/" + strconv.Itoa(pr) + "/comments"
	for i, step := range []struct {
		body             string
		created, updated bool
	}{{"one\n", true, false}, {"two\n", false, true}, {"two\n", false, false}} {
		api.Expect("GET", comments)
		switch {
		case step.created:
			api.Expect("POST", comments)
		case step.updated:
			api.Expect("PATCH", "/repos/acme/apps/issues/comments/"+strconv.FormatInt(api.Comments("acme/apps", pr)[0].ID, 10))
		}
		cm, err := review.Post(ctx, c, repo, pr, step.body)
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		if cm.Created != step.created || cm.Updated != step.updated {
			t.Errorf("post %d: created %v, updated %v", i, cm.Created, cm.Updated)
		}
	}
	posted := api.Comments("acme/apps", pr)
	if len(posted) != 1 || !strings.Contains(posted[0].Body, review.Marker) || !strings.HasSuffix(posted[0].Body, "two\n") {
		t.Errorf("comments: %+v", posted)
	}
}
