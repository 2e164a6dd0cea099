package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/version"
)

// help describes the webhook for -help, help and the completion scripts.
// Its flags are written with one dash, as docs/webhook.md and the
// deploy/webhook base write them.
func help() *cli.Help {
	return &cli.Help{Program: "webhook", Dash: "-", Commands: []cli.Command{
		{Summary: "webhook receives Flux's events, records deployment history, checks each app and serves its status.",
			Long: "It listens on -listen for Flux's generic-hmac Provider (POST /hooks/flux), the status pages\n" +
				"and /api/v1; docs/webhook.md describes every endpoint, and deploy/webhook runs it next to Flux.\n" +
				"It stops on SIGINT or SIGTERM after the requests in flight.",
			Examples: []string{
				"webhook -hmac-key-file hmac -api-token-file token -kubeconfig ~/.kube/config",
				"webhook -in-cluster -sqlite /data/webhook.db -hmac-key-file /etc/fleetwright/hmac/token   # as deploy/webhook runs it",
				"webhook -postgres-dsn-file dsn -in-cluster -cluster-name prod-eu",
			}},
		cli.VersionCommand("webhook"),
		cli.HelpCommand("webhook"),
		cli.CompletionCommand("webhook"),
	}}
}

// runVersion prints the build's version, commit, date and Go release.
func runVersion(args []string, stdout, stderr io.Writer, onHelp func(*flag.FlagSet)) error {
	fs := help().FlagSet("version", stdout, stderr, onHelp)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("webhook version takes no arguments")
	}
	return version.Get().Write(stdout, "webhook", *asJSON)
}

// runHelp prints the webhook's help, or a command's.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return run(ctx, []string{"-help"}, stdout, stderr)
	}
	h := help()
	c, ok := h.Lookup(args[0])
	switch {
	case len(args) > 1:
		return cli.Usagef("webhook help takes one command")
	case !ok:
		return h.UnknownCommand(args[0])
	case args[0] == "version":
		return runVersion([]string{"-help"}, stdout, stderr, nil)
	}
	h.Write(stdout, c, nil)
	return nil
}

// runCompletion prints the completion script of a shell.
func runCompletion(args []string, stdout, stderr io.Writer) error {
	h := help()
	if len(args) != 1 {
		return cli.Usagef("usage: webhook completion bash|zsh|fish")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		c, _ := h.Lookup("completion")
		h.Write(stdout, c, nil)
		return nil
	}
	flags := map[string][]string{}
	collect := func(name string) func(*flag.FlagSet) {
		return func(fs *flag.FlagSet) {
			fs.VisitAll(func(f *flag.Flag) { flags[name] = append(flags[name], f.Name) })
		}
	}
	if _, err := parseFlagsHelp([]string{"-help"}, io.Discard, io.Discard, collect("")); err != nil && !errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err := runVersion([]string{"-help"}, io.Discard, io.Discard, collect("version")); err != nil {
		if _, ok := errors.AsType[*cli.ExitError](err); !ok {
			return err
		}
	}
	return h.Completion(stdout, args[0], flags)
}
