package github_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
)

func TestReplaceSection(t *testing.T) {
	t.Parallel()
	body := "# Review\n" + github.Section("preview", "Preview: deploying") + "\n\nthe diff\n"
	got, ok := github.ReplaceSection(body, "preview", "Preview: running\n")
	want := "# Review\n<!-- fleetwright:preview -->\nPreview: running\n<!-- /fleetwright:preview -->\n\nthe diff\n"
	if !ok || got != want {
		t.Errorf("ReplaceSection = %q, %v; want %q", got, ok, want)
	}
	for _, body := range []string{
		"no section here",
		github.SectionStart("preview") + "\nunclosed",
		github.SectionEnd("preview") + "\n" + github.SectionStart("preview"),
		github.Section("other", "x"),
	} {
		if got, ok := github.ReplaceSection(body, "preview", "new"); ok || got != body {
			t.Errorf("ReplaceSection(%q) = %q, %v; want it unchanged", body, got, ok)
		}
	}
}

func TestUpdateCommentSection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(token))
	c := newClient(t, srv)
	pr := srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "feature", Base: "main", Title: "change apps"})
	marker := github.Marker("review")
	srv.AddComment(repoName, pr, "reviewer", "looks good, "+github.Section("preview", "a reviewer quoting the section"))
	// The review comment, as GitHub returns a body edited in its web
	// interface (CRLF line ends).
	body := marker + "\r\n" + github.Section("preview", "Preview: deploying") + "\r\nthe diff"
	ours := srv.AddComment(repoName, pr, "fleetwright[bot]", body)
	path := fmt.Sprintf("/repos/acme/fleet/issues/%d/comments", pr)

	srv.Expect("GET", path).Query("per_page", "100")
	srv.Expect("PATCH", fmt.Sprintf("/repos/acme/fleet/issues/comments/%d", ours)).
		JSONField("body", marker+"\n"+github.Section("preview", "Preview: running")+"\nthe diff")
	edited, err := c.UpdateCommentSection(ctx, repo, pr, marker, "preview", "Preview: running")
	if err != nil || !edited {
		t.Fatalf("UpdateCommentSection = %v, %v; want an edit", edited, err)
	}

	// The same content again writes nothing.
	srv.Expect("GET", path).Query("per_page", "100")
	if edited, err := c.UpdateCommentSection(ctx, repo, pr, marker, "preview", "Preview: running"); err != nil || edited {
		t.Errorf("second UpdateCommentSection = %v, %v; want no edit", edited, err)
	}

	// A pull request without the marked comment gets no comment.
	other := srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "other", Base: "main", Title: "other"})
	srv.Expect("GET", fmt.Sprintf("/repos/acme/fleet/issues/%d/comments", other)).Query("per_page", "100")
	if edited, err := c.UpdateCommentSection(ctx, repo, other, marker, "preview", "Preview: running"); err != nil || edited {
		t.Errorf("UpdateCommentSection without a comment = %v, %v; want nothing", edited, err)
	}
	if n := len(srv.Comments(repoName, other)); n != 0 {
		t.Errorf("%d comments posted, want none", n)
	}
}

// TestEditCommentSection keeps part of what the section holds: the
// edit sees the present content, and the rest of the comment stays.
func TestEditCommentSection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(token))
	c := newClient(t, srv)
	pr := srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "feature", Base: "main", Title: "change apps"})
	marker := github.Marker("review")
	ours := srv.AddComment(repoName, pr, "fleetwright[bot]", marker+"\r\n"+github.Section("preview", "deploying\r\n- skipped shop/docs")+"\r\nthe diff")
	srv.Expect("GET", fmt.Sprintf("/repos/acme/fleet/issues/%d/comments", pr)).Query("per_page", "100")
	srv.Expect("PATCH", fmt.Sprintf("/repos/acme/fleet/issues/comments/%d", ours)).
		JSONField("body", marker+"\n"+github.Section("preview", "running\n- skipped shop/docs")+"\nthe diff")
	var seen string
	edited, err := c.EditCommentSection(ctx, repo, pr, marker, "preview", func(old string) string {
		seen = old
		return strings.Replace(old, "deploying", "running", 1)
	})
	if err != nil || !edited || seen != "deploying\n- skipped shop/docs" {
		t.Errorf("EditCommentSection = %v, %v, the edit saw %q", edited, err, seen)
	}
	if got, ok := github.SectionContent("x "+github.Section("preview", "a\nb\n")+" y", "preview"); !ok || got != "a\nb" {
		t.Errorf("SectionContent = %q, %v", got, ok)
	}
	if _, ok := github.SectionContent(github.SectionEnd("preview")+github.SectionStart("preview"), "preview"); ok {
		t.Error("SectionContent found a section whose lines are out of order")
	}
}
