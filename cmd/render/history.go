package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// revision is one commit that changed an app's spec.
type revision struct {
	Commit      string    `json:"commit"`
	Author      string    `json:"author"`
	AuthorEmail string    `json:"author_email"`
	Date        time.Time `json:"date"`
	Subject     string    `json:"subject"`
	Message     string    `json:"message"`
	// Deployments lists the ids of the webhook's deployments of this spec
	// revision, newest first.
	Deployments []int64 `json:"deployments,omitempty"`
}

type historyOut struct {
	App         string       `json:"app"`
	File        string       `json:"file"`
	Paths       []string     `json:"paths"`
	Revisions   []revision   `json:"revisions"`
	Deployments []deployment `json:"deployments,omitempty"`
}

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
	client, err := wf.client()
	if err != nil {
		return err
	}
	w, a, err := openApp(*repoDir, pos[0])
	if err != nil {
		return err
	}
	g, _, rel, err := w.openGit(io)
	if err != nil {
		return err
	}
	defer g.Close()

	// The app's folder, and its template's, make what it renders.
	paths := []string{path.Dir(a.File)}
	if a.Spec.Template != nil {
		paths = append(paths, spec.TemplateDir(a.Spec.Template.Name))
	}
	gitPaths := make([]string, len(paths))
	for i, p := range paths {
		gitPaths[i] = path.Join(rel, p)
	}
	commits, err := g.History(ctx, "HEAD", *limit, gitPaths...)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	out := historyOut{App: appName(a), File: w.display(a.File), Paths: paths, Revisions: []revision{}}
	for _, c := range commits {
		out.Revisions = append(out.Revisions, revision{
			Commit: c.Hash, Author: c.Author.Name, AuthorEmail: c.Author.Email, Date: c.Author.When.UTC(),
			Subject: c.Subject, Message: strings.TrimRight(c.Message, "\n"),
		})
	}
	if client != nil {
		deps, err := client.deployments(ctx, a.Project, a.Spec.Name, *limit)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitFailed, Err: err}
		}
		out.Deployments = deps
		for i := range out.Revisions {
			for _, d := range deps {
				if d.SpecRevision != "" && d.SpecRevision == out.Revisions[i].Commit {
					out.Revisions[i].Deployments = append(out.Revisions[i].Deployments, d.ID)
				}
			}
		}
		if out.Deployments == nil {
			out.Deployments = []deployment{}
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return printHistory(io, out, client != nil)
}

func printHistory(io stdio, h historyOut, withDeployments bool) error {
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
