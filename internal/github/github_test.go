package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
)

const (
	token    = "ghs_test-token"
	repoName = "acme/fleet"
)

var repo = github.Repo{Owner: "acme", Name: "fleet"}

func newClient(t *testing.T, srv *githubtest.Server) *github.Client {
	t.Helper()
	c, err := github.New(github.Config{BaseURL: srv.URL, Token: token, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writesSince returns the write requests made after the first n requests.
func writesSince(srv *githubtest.Server, n int) []string {
	var out []string
	for _, r := range srv.Requests()[n:] {
		if r.IsWrite() {
			out = append(out, r.String())
		}
	}
	return out
}

func TestEnsurePullRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(token))
	c := newClient(t, srv)
	list := func() {
		srv.Expect("GET", "/repos/acme/fleet/pulls").
			Query("state", "open").Query("head", "acme:fleetwright/render").Query("base", "main")
	}

	// First run: no pull request yet, one is opened.
	list()
	srv.Expect("POST", "/repos/acme/fleet/pulls").
		JSONField("title", "fleet: render").JSONField("head", "fleetwright/render").
		JSONField("base", "main").JSONField("body", "body v1")
	pr, err := c.EnsurePullRequest(ctx, repo, "fleetwright/render", "main", "fleet: render", "body v1")
	if err != nil {
		t.Fatal(err)
	}
	want := github.PullRequest{Number: 1, URL: "https://github.com/acme/fleet/pull/1", Created: true}
	if diff := cmp.Diff(want, pr); diff != "" {
		t.Errorf("first run (-want +got):\n%s", diff)
	}

	// Rerun with the same content: reads only.
	n := len(srv.Requests())
	list()
	pr, err = c.EnsurePullRequest(ctx, repo, "fleetwright/render", "main", "fleet: render", "body v1")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Written() || pr.Number != 1 {
		t.Errorf("rerun = %+v, want no write on #1", pr)
	}
	if w := writesSince(srv, n); len(w) > 0 {
		t.Errorf("rerun wrote: %v", w)
	}

	// A changed body edits the same pull request.
	list()
	srv.Expect("PATCH", "/repos/acme/fleet/pulls/1").JSONField("body", "body v2").JSONField("title", "fleet: render")
	pr, err = c.EnsurePullRequest(ctx, repo, "fleetwright/render", "main", "fleet: render", "body v2")
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Updated || pr.Created || pr.Number != 1 {
		t.Errorf("changed body = %+v, want #1 updated", pr)
	}
	got := srv.PullRequests(repoName)
	if len(got) != 1 || got[0].Body != "body v2" || got[0].Title != "fleet: render" || got[0].User != "fleetwright[bot]" {
		t.Errorf("pull requests = %+v", got)
	}
}

func TestEnsurePullRequestFindsExisting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		seedTitle string
		seedBody  string
		wantWrite bool
	}{
		{"same", "fleet", "line 1\nline 2", false},
		{"same but CRLF from the web editor", "fleet", "line 1\r\nline 2", false},
		{"title differs", "old title", "line 1\nline 2", true},
		{"body differs", "fleet", "line 1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t, githubtest.WithToken(token))
			// Pull requests that must not match: another base, closed, a fork.
			srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "fleetwright/render", Base: "release", Title: "x"})
			srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "fleetwright/render", Base: "main", Title: "x", State: "closed"})
			srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "someone:fleetwright/render", Base: "main", Title: "x"})
			num := srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "fleetwright/render", Base: "main", Title: tc.seedTitle, Body: tc.seedBody})
			srv.Expect("GET", "/repos/acme/fleet/pulls").Query("head", "acme:fleetwright/render").Query("base", "main")
			if tc.wantWrite {
				srv.Expect("PATCH", fmt.Sprintf("/repos/acme/fleet/pulls/%d", num)).JSONField("title", "fleet")
			}
			pr, err := newClient(t, srv).EnsurePullRequest(context.Background(), repo, "fleetwright/render", "main", "fleet", "line 1\nline 2")
			if err != nil {
				t.Fatal(err)
			}
			if pr.Number != num || pr.Updated != tc.wantWrite || pr.Created {
				t.Errorf("got %+v, want #%d updated=%v", pr, num, tc.wantWrite)
			}
			if n := len(srv.PullRequests(repoName)); n != 4 {
				t.Errorf("%d pull requests, want 4", n)
			}
		})
	}
}

func TestUpsertComment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.WithToken(token))
	c := newClient(t, srv)
	pr := srv.AddPullRequest(repoName, githubtest.PullRequest{Head: "feature", Base: "main", Title: "change apps"})
	marker := github.Marker("render")
	// 150 comments by people; ours is the 120th, on the second page of 100.
	var ours int64
	for i := range 150 {
		body := fmt.Sprintf("comment %d", i)
		user := "reviewer"
		if i == 119 {
			body, user = marker+"\nold diff", "fleetwright[bot]"
		}
		id := srv.AddComment(repoName, pr, user, body)
		if i == 119 {
			ours = id
		}
	}
	path := fmt.Sprintf("/repos/acme/fleet/issues/%d/comments", pr)
	listAll := func() {
		srv.Expect("GET", path).Query("per_page", "100").Query("page", "")
		srv.Expect("GET", path).Query("per_page", "100").Query("page", "2")
	}

	// Edited in place, not duplicated.
	listAll()
	srv.Expect("PATCH", fmt.Sprintf("/repos/acme/fleet/issues/comments/%d", ours)).JSONField("body", marker+"\nnew diff")
	got, err := c.UpsertComment(ctx, repo, pr, marker, "new diff")
	if err != nil {
		t.Fatal(err)
	}
	want := github.Comment{ID: ours, URL: fmt.Sprintf("https://github.com/acme/fleet/pull/%d#issuecomment-%d", pr, ours), Updated: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("edit (-want +got):\n%s", diff)
	}
	comments := srv.Comments(repoName, pr)
	if len(comments) != 150 {
		t.Errorf("%d comments, want 150", len(comments))
	}
	var marked []string
	for _, cm := range comments {
		if strings.Contains(cm.Body, marker) {
			marked = append(marked, cm.Body)
		}
	}
	if diff := cmp.Diff([]string{marker + "\nnew diff"}, marked); diff != "" {
		t.Errorf("marked comments (-want +got):\n%s", diff)
	}

	// Unchanged: reads only.
	n := len(srv.Requests())
	listAll()
	got, err = c.UpsertComment(ctx, repo, pr, marker, marker+"\nnew diff")
	if err != nil {
		t.Fatal(err)
	}
	if got.Written() || got.ID != ours {
		t.Errorf("unchanged = %+v", got)
	}
	if w := writesSince(srv, n); len(w) > 0 {
		t.Errorf("unchanged comment wrote: %v", w)
	}

	// Another marker has no comment yet: every page is read, then one is posted.
	listAll()
	srv.Expect("POST", path).JSONField("body", github.Marker("danger")+"\nkeep out")
	got, err = c.UpsertComment(ctx, repo, pr, github.Marker("danger"), "keep out")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created || got.ID == ours {
		t.Errorf("new marker = %+v", got)
	}
	if n := len(srv.Comments(repoName, pr)); n != 151 {
		t.Errorf("%d comments, want 151", n)
	}
}

func TestValidationMakesNoRequest(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t) // expects nothing: any request fails the test
	c := newClient(t, srv)
	ctx := context.Background()
	long := strings.Repeat("é", github.MaxBodyLength+1)
	tests := []struct {
		name string
		call func() error
		is   error
	}{
		{"bad marker", func() error { _, err := c.UpsertComment(ctx, repo, 1, "<!-- other -->", "x"); return err }, github.ErrBadMarker},
		{"marker with end inside", func() error {
			_, err := c.UpsertComment(ctx, repo, 1, "<!-- fleetwright:a --> -->", "x")
			return err
		}, github.ErrBadMarker},
		{"long comment", func() error { _, err := c.UpsertComment(ctx, repo, 1, github.Marker("x"), long); return err }, github.ErrBodyTooLong},
		{"long pull request body", func() error {
			_, err := c.EnsurePullRequest(ctx, repo, "a", "main", "t", long)
			return err
		}, github.ErrBodyTooLong},
		{"no title", func() error { _, err := c.EnsurePullRequest(ctx, repo, "a", "main", " ", ""); return err }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("error = %v, want %v", err, tc.is)
			}
		})
	}
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		expect func(*githubtest.Server)
		call   func(*github.Client) error
		want   string
	}{
		{
			name: "list fails",
			expect: func(s *githubtest.Server) {
				s.Expect("GET", "/repos/acme/fleet/pulls").Respond(http.StatusBadGateway, map[string]any{"message": "Server Error"})
			},
			call: func(c *github.Client) error {
				_, err := c.EnsurePullRequest(context.Background(), repo, "b", "main", "t", "")
				return err
			},
			want: "listing pull requests of acme/fleet",
		},
		{
			name: "create refused",
			expect: func(s *githubtest.Server) {
				s.Expect("GET", "/repos/acme/fleet/pulls")
				s.Expect("POST", "/repos/acme/fleet/pulls").Respond(http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
			},
			call: func(c *github.Client) error {
				_, err := c.EnsurePullRequest(context.Background(), repo, "b", "main", "t", "")
				return err
			},
			want: "422",
		},
		{
			name: "comments of a missing pull request",
			expect: func(s *githubtest.Server) {
				s.Expect("GET", "/repos/acme/fleet/issues/9/comments")
			},
			call: func(c *github.Client) error {
				_, err := c.UpsertComment(context.Background(), repo, 9, github.Marker("x"), "b")
				return err
			},
			want: "404",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t)
			tc.expect(srv)
			err := tc.call(newClient(t, srv))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(fmt.Sprint(err), token) {
				t.Errorf("error leaks the token: %v", err)
			}
		})
	}
}

func TestParseRepo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    github.Repo
		wantErr bool
	}{
		{"acme/fleet", github.Repo{Owner: "acme", Name: "fleet"}, false},
		{"acme", github.Repo{}, true},
		{"acme/", github.Repo{}, true},
		{"/fleet", github.Repo{}, true},
		{"a/b/c", github.Repo{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := github.ParseRepo(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err == nil && got.String() != tc.in {
				t.Errorf("String() = %q", got.String())
			}
		})
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	t.Parallel()
	if _, err := github.New(github.Config{BaseURL: "not a url"}); err == nil {
		t.Error("New accepted a relative base URL")
	}
	if _, err := github.New(github.Config{}); err != nil {
		t.Errorf("New with defaults: %v", err)
	}
}
