package lifecycle

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// WriteText writes the history as render history prints it: a table of
// the revisions and, withDeployments, one of the deployments, with commits
// shortened to 12 digits and messages to their first line.
func (h *History) WriteText(w io.Writer, withDeployments bool) error {
	fmt.Fprintf(w, "%s (%s)\n\nREVISIONS\n", inEnvironment(h.App, h.Environment), strings.Join(h.Paths, ", "))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMIT\tDATE\tAUTHOR\tDEPLOYED\tMESSAGE")
	for _, r := range h.Revisions {
		dep := "-"
		if len(r.Deployments) > 0 {
			ids := make([]string, len(r.Deployments))
			for i, id := range r.Deployments {
				ids[i] = fmt.Sprint(id)
			}
			dep = strings.Join(ids, ",")
		}
		if !withDeployments {
			dep = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", short(r.Commit), r.Date.Format("2006-01-02 15:04Z"), r.Author, dep, r.Subject)
	}
	if len(h.Revisions) == 0 {
		fmt.Fprintln(tw, "(none: the spec is not committed)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !withDeployments {
		return nil
	}
	fmt.Fprintln(w, "\nDEPLOYMENTS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// The deployments of every environment name theirs.
	envs := h.Environment == "" && slices.ContainsFunc(h.Deployments, func(d api.Deployment) bool { return d.Environment != "" })
	if envs {
		fmt.Fprint(tw, "ENVIRONMENT\t")
	}
	fmt.Fprintln(tw, "ID\tSTARTED\tFINISHED\tPHASE\tSPEC\tFLEET\tMESSAGE")
	for _, d := range h.Deployments {
		if envs {
			fmt.Fprintf(tw, "%s\t", cmp.Or(d.Environment, "-"))
		}
		finished := "-"
		if !d.FinishedAt.IsZero() {
			finished = d.FinishedAt.UTC().Format("2006-01-02 15:04Z")
		}
		spec := "-"
		if d.SpecRevision != "" {
			spec = short(d.SpecRevision)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.StartedAt.UTC().Format("2006-01-02 15:04Z"), finished, d.Phase, spec, shortRevision(d.Revision), oneLine(d.Message))
	}
	if len(h.Deployments) == 0 {
		fmt.Fprintln(tw, "(none recorded)")
	}
	return tw.Flush()
}

// shortRevision shortens a Flux revision such as main@sha1:<hash>.
func shortRevision(r string) string {
	if i := strings.LastIndex(r, ":"); i >= 0 && len(r)-i > 13 {
		return r[:i+13]
	}
	return r
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
