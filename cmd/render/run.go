package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
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
  render [--out DIR] [--check | --diff] [PATH]      render the fleet into a folder
  render --mode push|pull-request [PATH]           commit the fleet to the fleet repository
  render review --base REF [--head REF] [--pr N]   comment on a pull request with what it changes

Lifecycle (each edits the specs, keeping comments and layout, validates the
result, and leaves it in the work tree or commits it with --commit):
  render new NAME [--project P] (--image IMG | --dockerfile PATH) [--port N] [--replicas N] [--ingress] [--host H]
  render pause APP | render resume APP            workloads to 0 replicas and back; addons keep running
  render scale APP COMPONENT REPLICAS | --min N --max N
  render rollback APP --to REF [--webhook URL --token-file F]   commit the app's folder as it was at REF
  render delete APP                                remove the app's folder (refused while other apps use its exports)
  render history APP [--webhook URL] [--format text|json]
  render template capture APP NAME [--param KEY=JSONPATH ...]
  render version [--json]                          print the version, commit, build date and Go release
APP is NAME, PROJECT/NAME or CLUSTER/PROJECT/NAME; --repo DIR names the apps repository.

Run 'render COMMAND --help' for a command's flags.
`

func run(ctx context.Context, args []string, io stdio) error {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return runValidate(ctx, args[1:], io)
		case "review":
			return runReview(ctx, args[1:], io)
		case "new":
			return runNew(ctx, args[1:], io)
		case "pause", "resume":
			return runPauseResume(ctx, args[1:], io, args[0] == "pause")
		case "scale":
			return runScale(ctx, args[1:], io)
		case "rollback":
			return runRollback(ctx, args[1:], io)
		case "delete":
			return runDelete(ctx, args[1:], io)
		case "history":
			return runHistory(ctx, args[1:], io)
		case "template":
			return runTemplate(ctx, args[1:], io)
		case "version":
			return runVersion(args[1:], io)
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

// isVerb tells a mistyped command from a path: a word that names no file
// or folder.
func isVerb(s string) bool {
	if strings.ContainsAny(s, "/.") {
		return false
	}
	_, err := os.Stat(s)
	return err != nil
}

func newFlags(name string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error { return cli.ParseFlags(fs, args) }

// parseArgs parses flags placed anywhere among the positional arguments
// and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) { return cli.ParseArgs(fs, args) }
