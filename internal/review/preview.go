package review

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// Preview is what the comment's Preview section (PreviewSection) says of
// the pull request's preview: render review writes it first, render
// preview with the apps it deployed, the webhook with their state.
type Preview struct {
	PR int
	// State is deploying (the preview is pushed, Flux applies it) or
	// closed.
	State string
	// Head is the commit the preview renders ("" before render preview
	// has run).
	Head string
	// Apps are the apps previewed, each with its addresses.
	Apps []PreviewApp
	// Skipped are the apps left out, and why.
	Skipped []PreviewSkip
}

// PreviewApp is an app of a preview.
type PreviewApp struct {
	Name string   // project/name
	URLs []string // https addresses, sorted
}

// PreviewSkip is an app a preview leaves out.
type PreviewSkip struct{ App, Reason string }

// Preview states.
const (
	PreviewDeploying = "deploying"
	PreviewClosed    = "closed"
)

// PreviewContent is the Preview section's content, everything from the
// specs escaped.
func PreviewContent(p Preview) string {
	env := layout.PreviewEnvironment(p.PR)
	var b strings.Builder
	switch {
	case p.State == PreviewClosed:
		fmt.Fprintf(&b, "**Preview:** %s, closed: its files are removed from the fleet, and Flux prunes it.\n", env)
	case len(p.Apps) == 0 && len(p.Skipped) == 0:
		b.WriteString("**Preview:** none: the pull request changes no app.\n")
	case len(p.Apps) == 0:
		b.WriteString("**Preview:** skipped:")
		for i, s := range p.Skipped {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " %s (%s)", md(s.App), md(s.Reason))
		}
		b.WriteString("\n")
		return strings.TrimRight(b.String(), "\n")
	default:
		fmt.Fprintf(&b, "**Preview:** %s, %s", env, md(p.State))
		if p.Head != "" {
			fmt.Fprintf(&b, " at `%s`", md(shortCommit(p.Head)))
		}
		for _, a := range p.Apps {
			if len(a.URLs) > 0 {
				fmt.Fprintf(&b, " — %s", md(a.URLs[0]))
				break
			}
		}
		b.WriteString("\n\n")
		for _, a := range p.Apps {
			if len(a.URLs) == 0 {
				fmt.Fprintf(&b, "- %s (no ingress)\n", md(a.Name))
				continue
			}
			urls := make([]string, len(a.URLs))
			for i, u := range a.URLs {
				urls[i] = md(u)
			}
			fmt.Fprintf(&b, "- %s: %s\n", md(a.Name), strings.Join(urls, ", "))
		}
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "- skipped %s (%s)\n", md(s.App), md(s.Reason))
	}
	return strings.TrimRight(b.String(), "\n")
}

func shortCommit(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
