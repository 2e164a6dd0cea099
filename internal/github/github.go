package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v81/github"
)

// DefaultBaseURL is the REST API of github.com.
const DefaultBaseURL = "https://api.github.com/"

// MaxBodyLength is the longest body, in characters, GitHub accepts for a
// pull request or an issue comment.
const MaxBodyLength = 65536

// pageSize is the page size asked for when listing (GitHub's maximum).
const pageSize = 100

var (
	// ErrBodyTooLong is returned, before any request, for a body over
	// MaxBodyLength characters.
	ErrBodyTooLong = errors.New("body is longer than GitHub accepts")
	// ErrBadMarker is returned for a marker that is not a hidden
	// "<!-- fleetwright:... -->" comment.
	ErrBadMarker = errors.New("marker must look like <!-- fleetwright:NAME -->")
)

// PullRequester opens or updates the pull request of a branch.
type PullRequester interface {
	EnsurePullRequest(ctx context.Context, repo Repo, head, base, title, body string) (PullRequest, error)
}

// Commenter keeps one comment, found by its marker, up to date on an issue
// or pull request.
type Commenter interface {
	UpsertComment(ctx context.Context, repo Repo, issue int, marker, body string) (Comment, error)
}

// Repo names a repository.
type Repo struct {
	Owner string
	Name  string
}

// ParseRepo parses "owner/name".
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Repo{}, fmt.Errorf("repository %q: want owner/name", s)
	}
	return Repo{Owner: owner, Name: name}, nil
}

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// Config configures a Client.
type Config struct {
	// BaseURL is the REST API root; DefaultBaseURL when empty. For GitHub
	// Enterprise Server it is https://HOST/api/v3/.
	BaseURL string
	// Token authenticates every request (sent as a bearer token).
	Token string
	// HTTPClient sends the requests; a new http.Client when nil.
	HTTPClient *http.Client
	// UserAgent is sent with every request; go-github's when empty.
	UserAgent string
	// Logger receives progress logs; discarded when nil.
	Logger *slog.Logger
}

// Client is a small GitHub REST client for pull requests, comments and
// deployments.
type Client struct {
	gh  *gh.Client
	log *slog.Logger
}

var (
	_ PullRequester = (*Client)(nil)
	_ Commenter     = (*Client)(nil)
)

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("GitHub base URL %q: must be an absolute URL", cfg.BaseURL)
	}
	c := gh.NewClient(cfg.HTTPClient)
	if cfg.Token != "" {
		c = c.WithAuthToken(cfg.Token)
	}
	c.BaseURL = u
	if cfg.UserAgent != "" {
		c.UserAgent = cfg.UserAgent
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{gh: c, log: log}, nil
}

// PullRequest is the outcome of EnsurePullRequest.
type PullRequest struct {
	Number int
	// URL is the pull request's page on GitHub.
	URL string
	// Created is set when the pull request was opened by this call.
	Created bool
	// Updated is set when an open pull request's title or body was edited.
	Updated bool
}

// Written reports whether the call changed anything on GitHub.
func (p PullRequest) Written() bool { return p.Created || p.Updated }

// EnsurePullRequest makes sure an open pull request from head to base has
// this title and body: it edits the open one when they differ, leaves it
// alone when they match, and opens one when there is none. head is a
// branch of repo, or "owner:branch" for a branch of another owner's fork.
func (c *Client) EnsurePullRequest(ctx context.Context, repo Repo, head, base, title, body string) (PullRequest, error) {
	if head == "" || base == "" || strings.TrimSpace(title) == "" {
		return PullRequest{}, errors.New("ensuring pull request: head, base and title are required")
	}
	if err := checkLength(body); err != nil {
		return PullRequest{}, fmt.Errorf("ensuring pull request: %w", err)
	}
	label := head
	if !strings.Contains(head, ":") {
		label = repo.Owner + ":" + head
	}
	opts := &gh.PullRequestListOptions{
		State: "open", Head: label, Base: base,
		ListOptions: gh.ListOptions{PerPage: pageSize},
	}
	var found *gh.PullRequest
	for found == nil {
		prs, resp, err := c.gh.PullRequests.List(ctx, repo.Owner, repo.Name, opts)
		if err != nil {
			return PullRequest{}, fmt.Errorf("listing pull requests of %s: %w", repo, err)
		}
		for _, pr := range prs {
			if sameLabel(pr.GetHead().GetLabel(), label) && pr.GetBase().GetRef() == base {
				found = pr
				break
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}

	if found == nil {
		pr, _, err := c.gh.PullRequests.Create(ctx, repo.Owner, repo.Name, &gh.NewPullRequest{
			Title: gh.Ptr(title), Head: gh.Ptr(head), Base: gh.Ptr(base), Body: gh.Ptr(body),
		})
		if err != nil {
			return PullRequest{}, fmt.Errorf("opening pull request %s → %s on %s: %w", head, base, repo, err)
		}
		c.log.Info("opened pull request", "repo", repo.String(), "number", pr.GetNumber())
		return PullRequest{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Created: true}, nil
	}

	out := PullRequest{Number: found.GetNumber(), URL: found.GetHTMLURL()}
	if found.GetTitle() == title && sameText(found.GetBody(), body) {
		c.log.Info("pull request up to date", "repo", repo.String(), "number", out.Number)
		return out, nil
	}
	edit := &gh.PullRequest{Title: gh.Ptr(title), Body: gh.Ptr(body)}
	pr, _, err := c.gh.PullRequests.Edit(ctx, repo.Owner, repo.Name, out.Number, edit)
	if err != nil {
		return out, fmt.Errorf("editing pull request #%d of %s: %w", out.Number, repo, err)
	}
	out.Updated = true
	if u := pr.GetHTMLURL(); u != "" {
		out.URL = u
	}
	c.log.Info("updated pull request", "repo", repo.String(), "number", out.Number)
	return out, nil
}

// Comment is the outcome of UpsertComment.
type Comment struct {
	ID int64
	// URL is the comment's page on GitHub.
	URL string
	// Created is set when the comment was posted by this call.
	Created bool
	// Updated is set when an existing comment was edited.
	Updated bool
}

// Written reports whether the call changed anything on GitHub.
func (c Comment) Written() bool { return c.Created || c.Updated }

// Marker returns the hidden marker "<!-- fleetwright:name -->" that
// identifies one kind of comment.
func Marker(name string) string { return "<!-- fleetwright:" + name + " -->" }

// UpsertComment keeps one comment on the issue or pull request up to date:
// the first comment containing marker (searched through every page) is
// edited when its body differs and left alone when it matches; without
// one, a comment is posted. body is prefixed with marker on a line of its
// own when it does not contain it.
func (c *Client) UpsertComment(ctx context.Context, repo Repo, issue int, marker, body string) (Comment, error) {
	if err := checkMarker(marker); err != nil {
		return Comment{}, err
	}
	if !strings.Contains(body, marker) {
		body = marker + "\n" + body
	}
	if err := checkLength(body); err != nil {
		return Comment{}, fmt.Errorf("comment on #%d: %w", issue, err)
	}

	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: pageSize}}
	var found *gh.IssueComment
	for found == nil {
		comments, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, issue, opts)
		if err != nil {
			return Comment{}, fmt.Errorf("listing comments of #%d on %s: %w", issue, repo, err)
		}
		for _, cm := range comments {
			if strings.Contains(cm.GetBody(), marker) {
				found = cm
				break
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}

	if found == nil {
		cm, _, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, issue, &gh.IssueComment{Body: gh.Ptr(body)})
		if err != nil {
			return Comment{}, fmt.Errorf("commenting on #%d of %s: %w", issue, repo, err)
		}
		c.log.Info("posted comment", "repo", repo.String(), "issue", issue, "comment", cm.GetID())
		return Comment{ID: cm.GetID(), URL: cm.GetHTMLURL(), Created: true}, nil
	}

	out := Comment{ID: found.GetID(), URL: found.GetHTMLURL()}
	if sameText(found.GetBody(), body) {
		c.log.Info("comment up to date", "repo", repo.String(), "issue", issue, "comment", out.ID)
		return out, nil
	}
	cm, _, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, out.ID, &gh.IssueComment{Body: gh.Ptr(body)})
	if err != nil {
		return out, fmt.Errorf("editing comment %d on #%d of %s: %w", out.ID, issue, repo, err)
	}
	out.Updated = true
	if u := cm.GetHTMLURL(); u != "" {
		out.URL = u
	}
	c.log.Info("updated comment", "repo", repo.String(), "issue", issue, "comment", out.ID)
	return out, nil
}

func checkMarker(m string) error {
	inner, ok := strings.CutPrefix(m, "<!-- fleetwright:")
	if !ok {
		return fmt.Errorf("%w: got %q", ErrBadMarker, m)
	}
	inner, ok = strings.CutSuffix(inner, " -->")
	if !ok || inner == "" || strings.Contains(inner, "--") || strings.ContainsAny(inner, "\n>") {
		return fmt.Errorf("%w: got %q", ErrBadMarker, m)
	}
	return nil
}

func checkLength(body string) error {
	if n := utf8.RuneCountInString(body); n > MaxBodyLength {
		return fmt.Errorf("%w: %d characters, at most %d", ErrBodyTooLong, n, MaxBodyLength)
	}
	return nil
}

// sameLabel compares "owner:branch" labels: logins ignore case, branch
// names do not.
func sameLabel(a, b string) bool {
	ao, ab, _ := strings.Cut(a, ":")
	bo, bb, _ := strings.Cut(b, ":")
	return strings.EqualFold(ao, bo) && ab == bb
}

// sameText compares bodies as GitHub stores them: text edited in the web
// interface comes back with CRLF line ends.
func sameText(a, b string) bool {
	return strings.ReplaceAll(a, "\r\n", "\n") == strings.ReplaceAll(b, "\r\n", "\n")
}
