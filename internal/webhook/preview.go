package webhook

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// A pull request's preview is an environment of its own, "pr-<N>"
// (layout.PreviewEnvironment), whose apps run in their project's preview
// namespace (layout.PreviewNamespace) on the platform's previews cluster.
// The webhook follows it as any environment, reports it on the apps
// repository's pull request head commit as a transient GitHub deployment,
// and keeps the preview section of the pull request's review comment up
// to date with the state of its apps (docs/webhook.md, "Previews").

// reviewMarker finds the pull request's review comment that render
// writes (internal/review's Marker), and previewSectionName the section
// of it that says how the preview is going.
var reviewMarker = github.Marker("review")

const previewSectionName = "preview"

// previewSection writes the preview section of pull request pr's review
// comment from the state of every app of its preview (environment env),
// keeping the apps render preview listed as skipped. It writes nothing
// when the section already says so, or when the comment has no such
// section (render writes it with the comment).
func (g *githubWorker) previewSection(pr int, env string) error {
	if g.cfg.Sections == nil {
		return nil
	}
	repo, ok := g.cfg.previewRepo()
	if !ok {
		return nil
	}
	content, err := previewContent(g.ctx, g.st, env)
	if err != nil || content == "" {
		return err
	}
	return g.call(func(ctx context.Context) error {
		_, err := g.cfg.Sections.EditCommentSection(ctx, repo, pr, reviewMarker, previewSectionName, func(old string) string {
			return content + skippedLines(old)
		})
		return err
	})
}

// skippedPrefix starts the line of the preview section on which render
// preview names an app the preview leaves out.
const skippedPrefix = "- skipped "

// skippedLines are the lines of a preview section that name an app the
// preview leaves out, each after a line end.
func skippedLines(section string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, skippedPrefix) {
			b.WriteString("\n" + line)
		}
	}
	return b.String()
}

// previewContent is the preview section for environment env, from the
// state of the preview's apps in the store: a line on the whole preview,
// its state the least advanced of its apps', at the pull request's head
// commit, with the first app's live URL; then a line per app, by project
// and name:
//
//	**Preview:** pr-12, running at `4f1c2b3a9d8e` — https://web-shop-pr12.preview.example.com/
//
//	- shop/web: running — https://web-shop-pr12.preview.example.com/ (checks: sync ✓ readiness ✓ https ✓)
//
// "" when the preview has no app. Everything in it that came from an
// event or a cluster is escaped for Markdown.
func previewContent(ctx context.Context, st store.Store, env string) (string, error) {
	apps, err := st.Apps(ctx)
	if err != nil {
		return "", err
	}
	var (
		lines        strings.Builder
		head, url    string
		state        store.Phase
		n, removed   int
		rank, newest = -1, int64(0)
	)
	for _, a := range apps {
		if a.Environment != env {
			continue
		}
		d, err := st.Deployment(ctx, a.DeploymentID)
		if err != nil {
			return "", err
		}
		n++
		if r := phaseRank(a.Phase); r > rank {
			rank, state = r, a.Phase
		}
		if a.Phase == store.PhaseDeleted {
			removed++
		}
		if a.SpecRevision != "" && a.DeploymentID > newest {
			head, newest = a.SpecRevision, a.DeploymentID
		}
		fmt.Fprintf(&lines, "- %s: %s", markdownText(a.Ref()), previewState(a.Phase))
		switch u := safeURL(a.LiveURL); {
		case a.Phase == store.PhaseDeleted:
		case u != "" && (a.Phase == store.PhaseRunning || a.Phase == store.PhaseDegraded || a.Phase == store.PhasePaused):
			lines.WriteString(" — " + u)
			url = cmpOr(url, u)
		case a.Phase == store.PhaseFailed && a.Message != "":
			lines.WriteString(" — " + markdownText(truncate(a.Message, 200)))
		}
		if a.Phase != store.PhaseDeleted {
			lines.WriteString(" (checks:")
			for _, c := range decodeResult(d).Checks {
				lines.WriteString(" " + checkLabel(c.Name) + " " + checkMark(c.State))
			}
			lines.WriteString(")")
		}
		lines.WriteString("\n")
	}
	if n == 0 {
		return "", nil
	}
	var b strings.Builder
	switch {
	case removed == n:
		fmt.Fprintf(&b, "**Preview:** %s, removed: Flux pruned it", env)
	default:
		fmt.Fprintf(&b, "**Preview:** %s, %s", env, previewState(state))
		if head != "" {
			fmt.Fprintf(&b, " at `%s`", markdownText(head[:min(len(head), 12)]))
		}
		if url != "" {
			b.WriteString(" — " + url)
		}
	}
	b.WriteString("\n\n" + strings.TrimRight(lines.String(), "\n"))
	return b.String(), nil
}

// phaseRank orders the phases of a preview's apps: the preview as a
// whole is in the phase of highest rank among them (a failed app makes
// it failed, one still deploying makes it deploying); removed apps count
// only when every app is.
func phaseRank(p store.Phase) int {
	switch p {
	case store.PhaseDeleted:
		return 0
	case store.PhasePaused:
		return 1
	case store.PhaseRunning:
		return 2
	case store.PhaseDegraded:
		return 3
	case store.PhasePending:
		return 4
	case store.PhaseDeploying:
		return 5
	case store.PhaseFailed:
		return 6
	}
	return 4
}

// previewState names a preview app's phase for the pull request.
func previewState(p store.Phase) string {
	if p == store.PhaseDeleted {
		return "removed"
	}
	return string(p)
}

// checkLabel names a check as the pull request reads it.
func checkLabel(name string) string {
	if name == probe.CheckReachability {
		return "https"
	}
	return name
}

// checkMark says a check's state in one sign.
func checkMark(s probe.State) string {
	switch s {
	case probe.StatePassed:
		return "✓"
	case probe.StateFailed:
		return "✗"
	case probe.StateSkipped:
		return "–"
	case probe.StateGone:
		return "gone"
	}
	return "…"
}

// markdownText escapes s for a line of Markdown: every ASCII punctuation
// character that Markdown or HTML reads is backslash-escaped, and line
// ends become spaces, so text from an event can neither format, link,
// nor end the section.
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case strings.ContainsRune("\\`*_{}[]()<>#+!|~&:", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// safeURL returns a live URL as it may stand in Markdown: an http(s)
// URL of plain characters only (a host and path as render writes them),
// "" for anything else.
func safeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil {
		return ""
	}
	for _, r := range u {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune(":/.-_~%", r) {
			return ""
		}
	}
	return u
}
