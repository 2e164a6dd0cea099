package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
)

type stdio struct {
	in       io.Reader
	out, err io.Writer
	getenv   func(string) string
}

func exitCode(err error, stderr io.Writer) int { return cli.Code(err, stderr) }

const usage = `render validates app specs and renders them into a Flux fleet.

Usage:
  render validate [--format text|json] [PATH...]   check specs; exit 1 when invalid
  render [--out DIR] [--check | --diff] [PATH]      render the fleet

Run 'render COMMAND --help' for a command's flags.
`

func run(ctx context.Context, args []string, io stdio) error {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return runValidate(ctx, args[1:], io)
		case "help", "-h", "--help":
			fmt.Fprint(io.out, usage)
			return nil
		}
		if !strings.HasPrefix(args[0], "-") && isVerb(args[0]) {
			return cli.Usagef("unknown command %q\n%s", args[0], usage)
		}
	}
	return runRender(ctx, args, io)
}

// isVerb tells a mistyped command from a path.
func isVerb(s string) bool { return !strings.ContainsAny(s, "/.") }

func newFlags(name string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return &cli.ExitError{Code: cli.ExitOK, Silent: true}
		}
		return &cli.ExitError{Code: cli.ExitUsage, Err: err, Silent: true}
	}
	return nil
}
