package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v81/github"
)

// A section is a part of a comment that another program keeps up to date
// after the comment is written: it sits between SectionStart(name) and
// SectionEnd(name), each on a line of its own. The writer of the comment
// puts the section in with its first content; a later writer replaces only
// what is between the two lines and leaves the rest of the comment alone.

// SectionStart is the hidden line that opens section name.
func SectionStart(name string) string { return "<!-- fleetwright:" + name + " -->" }

// SectionEnd is the hidden line that closes section name.
func SectionEnd(name string) string { return "<!-- /fleetwright:" + name + " -->" }

// Section returns content wrapped as section name, ready to be placed in a
// comment's body.
func Section(name, content string) string {
	return SectionStart(name) + "\n" + strings.TrimRight(content, "\n") + "\n" + SectionEnd(name)
}

// ReplaceSection returns body with the content of section name replaced,
// and whether body holds that section. A body without both of its lines,
// in order, is returned unchanged.
func ReplaceSection(body, name, content string) (string, bool) {
	start, end := SectionStart(name), SectionEnd(name)
	i := strings.Index(body, start)
	if i < 0 {
		return body, false
	}
	j := strings.Index(body[i+len(start):], end)
	if j < 0 {
		return body, false
	}
	j += i + len(start)
	return body[:i] + Section(name, content) + body[j+len(end):], true
}

// SectionContent returns the content of section name in body, and
// whether body holds that section (both of its lines, in order).
func SectionContent(body, name string) (string, bool) {
	start, end := SectionStart(name), SectionEnd(name)
	i := strings.Index(body, start)
	if i < 0 {
		return "", false
	}
	rest := body[i+len(start):]
	j := strings.Index(rest, end)
	if j < 0 {
		return "", false
	}
	return strings.Trim(rest[:j], "\n"), true
}

// SectionUpdater keeps a section of a marked comment up to date, as the
// webhook does with the review comment's preview section.
type SectionUpdater interface {
	// EditCommentSection replaces the content of section name in the
	// comment marked marker on the issue or pull request with what edit
	// makes of its present content, as UpdateCommentSection does.
	EditCommentSection(ctx context.Context, repo Repo, issue int, marker, name string, edit func(old string) string) (bool, error)
}

var _ SectionUpdater = (*Client)(nil)

// UpdateCommentSection replaces section name in the comment marked marker
// on the issue or pull request. It does nothing when no comment carries
// marker, when that comment has no such section, or when the section
// already reads content; it reports whether it edited the comment.
func (c *Client) UpdateCommentSection(ctx context.Context, repo Repo, issue int, marker, name, content string) (bool, error) {
	return c.EditCommentSection(ctx, repo, issue, marker, name, func(string) string { return content })
}

// EditCommentSection is UpdateCommentSection with the new content made by
// edit from the section's present content (without its two lines, line
// ends as LF), so that a writer can keep what another wrote there.
func (c *Client) EditCommentSection(ctx context.Context, repo Repo, issue int, marker, name string, edit func(old string) string) (bool, error) {
	if err := checkMarker(marker); err != nil {
		return false, err
	}
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: pageSize}}
	for {
		comments, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, issue, opts)
		if err != nil {
			return false, fmt.Errorf("listing comments of #%d on %s: %w", issue, repo, err)
		}
		for _, cm := range comments {
			if !strings.Contains(cm.GetBody(), marker) {
				continue
			}
			old := strings.ReplaceAll(cm.GetBody(), "\r\n", "\n")
			present, ok := SectionContent(old, name)
			if !ok {
				return false, nil
			}
			body, _ := ReplaceSection(old, name, edit(present))
			if body == old {
				return false, nil
			}
			if err := checkLength(body); err != nil {
				return false, fmt.Errorf("comment on #%d: %w", issue, err)
			}
			if _, _, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, cm.GetID(), &gh.IssueComment{Body: gh.Ptr(body)}); err != nil {
				return false, fmt.Errorf("editing comment %d on #%d of %s: %w", cm.GetID(), issue, repo, err)
			}
			c.log.Info("updated comment section", "repo", repo.String(), "issue", issue, "comment", cm.GetID(), "section", name)
			return true, nil
		}
		if resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
}
