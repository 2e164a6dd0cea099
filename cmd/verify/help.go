package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/fleetwright/fleetwright/internal/cli"
)

// runHelp prints verify's help, or a command's.
func runHelp(ctx context.Context, args []string, io stdio) error {
	if len(args) == 0 {
		return run(ctx, []string{"--help"}, io)
	}
	h := help()
	c, ok := h.Lookup(args[0])
	switch {
	case len(args) > 1:
		return cli.Usagef("verify help takes one command")
	case !ok:
		return h.UnknownCommand(args[0])
	case args[0] == "version":
		return run(ctx, []string{"version", "--help"}, io)
	}
	h.Write(io.out, c, nil)
	return nil
}

// runCompletion prints the completion script of a shell.
func runCompletion(ctx context.Context, args []string, io stdio) error {
	h := help()
	if len(args) != 1 {
		return cli.Usagef("usage: verify completion bash|zsh|fish")
	}
	if args[0] == "-h" || args[0] == "--help" {
		c, _ := h.Lookup("completion")
		h.Write(io.out, c, nil)
		return nil
	}
	flags := map[string][]string{}
	for name, a := range map[string][]string{"": {"--help"}, "version": {"version", "--help"}} {
		sink := io
		sink.out, sink.err = discard(), discard()
		sink.onHelp = func(fs *flag.FlagSet) {
			fs.VisitAll(func(f *flag.Flag) { flags[name] = append(flags[name], f.Name) })
		}
		if err := run(ctx, a, sink); err != nil {
			if _, ok := errors.AsType[*cli.ExitError](err); !ok {
				return err
			}
		}
	}
	return h.Completion(io.out, args[0], flags)
}

// discard is io.Discard, for functions whose stdio parameter hides package io.
func discard() io.Writer { return io.Discard }
