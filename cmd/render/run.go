package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
)

type stdio struct {
	in       io.Reader
	out, err io.Writer
	getenv   func(string) string
	// onHelp, when set, receives a command's flags instead of its help
	// being printed (the completion scripts read them so).
	onHelp func(*flag.FlagSet)
}

func exitCode(err error, stderr io.Writer) int { return cli.Code(err, stderr) }

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
		case "promote":
			return runPromote(ctx, args[1:], io)
		case "preview":
			return runPreview(ctx, args[1:], io)
		case "delete":
			return runDelete(ctx, args[1:], io)
		case "history":
			return runHistory(ctx, args[1:], io)
		case "template":
			return runTemplate(ctx, args[1:], io)
		case "version", "--version", "-version":
			return runVersion(args[1:], io)
		case "help":
			return runHelp(ctx, args[1:], io)
		case "completion":
			return runCompletion(ctx, args[1:], io)
		}
		if !strings.HasPrefix(args[0], "-") && isVerb(args[0]) {
			return help().UnknownCommand(args[0])
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

// newFlags returns the flag set of command name ("render validate"), whose
// --help prints the command's help (cmd/render/help.go).
func newFlags(name string, io stdio) *flag.FlagSet {
	cmd := strings.TrimPrefix(strings.TrimPrefix(name, "render"), " ")
	if cmd == "template capture" {
		cmd = "template"
	}
	return help().FlagSet(cmd, io.out, io.err, io.onHelp)
}

func parseFlags(fs *flag.FlagSet, args []string) error { return cli.ParseFlags(fs, args) }

// parseArgs parses flags placed anywhere among the positional arguments
// and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) { return cli.ParseArgs(fs, args) }
