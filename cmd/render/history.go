package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
)

func runHistory(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render history", io)
	repoDir := fs.String("repo", ".", "the apps repository (or a folder inside it)")
	format := fs.String("format", "text", "output format: text or json")
	limit := fs.Int("limit", 50, "at most this many revisions and deployments (0: all)")
	wf := addWebhookFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render history APP [--webhook URL --token-file F] [--format text|json]")
	}
	if *format != "text" && *format != "json" {
		return cli.Usagef("--format must be text or json")
	}
	o := lifecycleOptions(io, *repoDir, pos[0])
	if o.Deployments, err = wf.deployments(); err != nil {
		return err
	}
	h, err := lifecycle.ReadHistory(ctx, o, *limit)
	if err != nil {
		return lifecycleError(err, "text", io)
	}
	if *format == "json" {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(h)
	}
	return printHistory(io, h, o.Deployments != nil)
}

func printHistory(io stdio, h *lifecycle.History, withDeployments bool) error {
	fmt.Fprintf(io.out, "%s (%s)\n\nREVISIONS\n", h.App, strings.Join(h.Paths, ", "))
	tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
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
	fmt.Fprintln(io.out, "\nDEPLOYMENTS")
	tw = tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tFINISHED\tPHASE\tSPEC\tFLEET\tMESSAGE")
	for _, d := range h.Deployments {
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

func short(hash string) string { return hash[:min(len(hash), 12)] }

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
