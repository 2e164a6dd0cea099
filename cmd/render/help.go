package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
)

// help describes render's commands for --help, help COMMAND and the
// completion scripts.
func help() *cli.Help {
	return &cli.Help{Program: "render", Overview: overview, Commands: []cli.Command{
		{Summary: "render validates app specs and renders them into a Flux fleet.", Args: "[PATH]",
			Long: "With no command, render renders the apps repository at PATH (default: the current folder)\n" +
				"into the fleet: a folder (--mode dir, the default), the fleet branch (--mode push) or a\n" +
				"pull request on the fleet repository (--mode pull-request). --check and --diff write nothing.\n" +
				"Exit status: 0 done (for --check and --diff: no difference), 1 invalid specs, images that\n" +
				"could not be made ready, or (--check, --diff) a difference, 2 usage or I/O error.",
			Examples: []string{
				"render                          # render ./ into platform.yaml's fleet.path",
				"render --out ../fleet apps-repo",
				"render --diff                   # show what would change; exit 1 when something would",
				"render --diff --format json     # the same as one JSON object",
				"render --mode pull-request      # open or update the fleet pull request",
			}},
		{Name: "validate", Args: "[PATH...]", Summary: "check specs against the schema and the platform's rules; exit 1 when invalid",
			Examples: []string{"render validate", "render validate apps/shop/api/app.yaml", "render validate --format json"}},
		{Name: "review", Args: "[PATH]", Summary: "comment on a pull request with what it changes in the fleet",
			Examples: []string{"render review --base origin/main --pr 42", "render review --base main   # print the comment"}},
		{Name: "new", Args: "NAME", Summary: "write a new app's spec under apps/<project>/NAME",
			Examples: []string{"render new api --image myorg/api:v1 --port 8080 --ingress", "render new worker --project shop --dockerfile Dockerfile"}},
		{Name: "pause", Args: "APP", Summary: "run the app's workloads with 0 replicas (addons keep running); the spec keeps the real counts",
			Examples: []string{"render pause shop/api --commit"}},
		{Name: "resume", Args: "APP", Summary: "undo pause: the workloads get their replicas back",
			Examples: []string{"render resume shop/api --commit"}},
		{Name: "scale", Args: "APP COMPONENT (REPLICAS | --min N --max N)", Summary: "set a component's replicas, or its autoscaling bounds",
			Examples: []string{"render scale shop/api web 3", "render scale shop/api web --min 2 --max 10"}},
		{Name: "rollback", Args: "APP [--env ENV] --to REF", Summary: "commit the app's folder as it was at REF (a Git revision, or a deployment the webhook recorded)",
			Examples: []string{"render rollback shop/api --to HEAD~1", "render rollback shop/api --to 7 --webhook https://fleet.example.com --token-file token",
				"render rollback shop/api --env production --to 7 --webhook https://fleet.example.com --token-file token"}},
		{Name: "promote", Args: "[APP...] --to ENV", Summary: "render apps into an environment with promote_from at the release that runs, every check green, in the environment it is promoted from",
			Examples: []string{"render promote shop/api --to production --webhook https://fleet.example.com --token-file token", "render promote --to production --force --reason 'hotfix, staging is down'"}},
		{Name: "preview", Args: "--pr N [--close]", Summary: "push the preview of a pull request's apps (environment pr-N, hosts under previews.apps_domain) to the fleet branch, or remove it",
			Long: "render preview renders the apps the pull request changes (their folders, or the templates\n" +
				"they use, differ from the merge base with --base) and the apps they reference, each as written,\n" +
				"into namespace <project>-prN on platform.yaml's previews.cluster, and pushes them under\n" +
				"previews/<cluster>/pr-N/ of the fleet branch (no fleet pull request). --close removes them.\n" +
				"Every run removes the previews older than previews.ttl; a new preview beyond previews.max is\n" +
				"refused. With $GITHUB_TOKEN and the apps repository, it updates the Preview section of the pull\n" +
				"request's review comment.\n" +
				"Exit status: 0 done, 1 invalid specs, images not ready or previews.max reached, 2 usage or I/O error.",
			Examples: []string{"render preview --pr 42 --base origin/main", "render preview --pr 42 --close",
				"render preview --pr 42 --base main --mode dir --out ../fleet --offline"}},
		{Name: "delete", Args: "APP", Summary: "remove the app's folder (refused while other apps use its exports); Flux then prunes the app",
			Examples: []string{"render delete shop/api --commit"}},
		{Name: "history", Args: "APP [--env ENV]", Summary: "list the app's spec changes from Git, and its deployments with --webhook",
			Examples: []string{"render history shop/api", "render history shop/api --webhook https://fleet.example.com --token-file token --format json",
				"render history shop/api --env staging --webhook https://fleet.example.com --token-file token"}},
		{Name: "template", Args: "capture APP NAME", Summary: "capture an app's components as a template (templates/NAME/template.yaml)",
			Examples: []string{"render template capture shop/api web-service --param image=components[api].workload_spec.image"}},
		cli.VersionCommand("render"),
		cli.HelpCommand("render"),
		cli.CompletionCommand("render"),
	}}
}

// overview is render's help without a command: its commands and its own
// flags.
func overview(w io.Writer, fs *flag.FlagSet) {
	h := help()
	root, _ := h.Lookup("")
	fmt.Fprintf(w, "%s\n\nUsage:\n  render [flags] %s\n  render COMMAND [flags] [ARGS]\n\nCommands:\n", root.Summary, root.Args)
	width := 0
	for _, n := range h.Names() {
		width = max(width, len(n))
	}
	for _, c := range h.Commands[1:] {
		fmt.Fprintf(w, "  %-*s   %s\n", width, c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nAPP is NAME, PROJECT/NAME or CLUSTER/PROJECT/NAME. Run 'render help COMMAND' for a command's\nflags and examples.\n\n%s\n", root.Long)
	if fs != nil {
		fmt.Fprintf(w, "\nFlags of render without a command:\n")
		h.WriteFlags(w, fs)
	}
	fmt.Fprintf(w, "\nExamples:\n")
	for _, e := range root.Examples {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// runHelp prints render's help, or a command's.
func runHelp(ctx context.Context, args []string, io stdio) error {
	switch {
	case len(args) == 0:
		return run(ctx, []string{"--help"}, io)
	case len(args) > 1 && args[0] != "template":
		return cli.Usagef("render help takes one command, got %q", strings.Join(args, " "))
	}
	h := help()
	if _, ok := h.Lookup(args[0]); !ok {
		return h.UnknownCommand(args[0])
	}
	switch args[0] {
	case "help":
		h.Write(io.out, mustLookup(h, "help"), nil)
		return nil
	case "completion":
		h.Write(io.out, mustLookup(h, "completion"), nil)
		return nil
	case "template":
		return run(ctx, []string{"template", "capture", "--help"}, io)
	}
	return run(ctx, []string{args[0], "--help"}, io)
}

func mustLookup(h *cli.Help, name string) cli.Command {
	c, _ := h.Lookup(name)
	return c
}

// runCompletion prints the completion script of a shell, with the flags
// each command takes.
func runCompletion(ctx context.Context, args []string, io stdio) error {
	h := help()
	if len(args) != 1 || args[0] == "-h" || args[0] == "--help" {
		if len(args) == 1 {
			h.Write(io.out, mustLookup(h, "completion"), nil)
			return nil
		}
		return cli.Usagef("usage: render completion bash|zsh|fish")
	}
	flags := map[string][]string{}
	for _, name := range append([]string{""}, h.Names()...) {
		if name == "help" || name == "completion" {
			continue
		}
		args := []string{name, "--help"}
		switch name {
		case "":
			args = []string{"--help"}
		case "template":
			args = []string{"template", "capture", "--help"}
		}
		sink := io
		sink.out, sink.err = discard(), discard()
		sink.onHelp = func(fs *flag.FlagSet) {
			fs.VisitAll(func(f *flag.Flag) { flags[name] = append(flags[name], f.Name) })
		}
		if err := run(ctx, args, sink); err != nil {
			if _, ok := errors.AsType[*cli.ExitError](err); !ok {
				return err
			}
		}
		slices.Sort(flags[name])
	}
	return h.Completion(io.out, args[0], flags)
}

// discard is io.Discard, for functions whose stdio parameter hides package io.
func discard() io.Writer { return io.Discard }
