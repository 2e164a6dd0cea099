package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
)

// Lifecycle verbs edit the specs of the apps repository with package
// lifecycle; here are their flags and what they print.

// editFlags are the flags of every verb that changes the apps repository.
type editFlags struct {
	repo    string
	commit  bool
	author  string
	message string
	dryRun  bool
	format  string
}

func addEditFlags(fs *flag.FlagSet, commitByDefault bool) *editFlags {
	f := &editFlags{}
	fs.StringVar(&f.repo, "repo", ".", "the apps repository (or a folder inside it)")
	fs.BoolVar(&f.commit, "commit", commitByDefault, "commit the change with Git (else leave it in the work tree)")
	fs.StringVar(&f.author, "author", "", "commit author as 'Name <email>' (default: GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, then git config user.name/user.email)")
	fs.StringVar(&f.message, "message", "", "commit message (default: one naming the change)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the change as a diff and write nothing")
	fs.StringVar(&f.format, "format", "text", "problem output format: text or json")
	return f
}

// lifecycleOptions is the environment of a lifecycle verb about app in
// the apps repository repo.
func lifecycleOptions(io stdio, repo, app string) lifecycle.Options {
	return lifecycle.Options{
		Repo: repo, App: app, Getenv: io.getenv,
		Logger: cli.WarningLogger(io.err),
	}
}

// finish writes the change an edit made (or prints it with --dry-run)
// and says what it did, or reports the edit's error.
func (f *editFlags) finish(ctx context.Context, o lifecycle.Options, ch *lifecycle.Change, err error, io stdio) error {
	switch {
	case err != nil:
		return lifecycleError(err, f.format, io)
	case ch.Empty():
		fmt.Fprintln(io.out, ch.Done)
		return nil
	case f.dryRun:
		fmt.Fprint(io.out, ch.Diff())
		return nil
	}
	res, err := lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{Commit: f.commit, Author: f.author, Message: f.message})
	if errors.Is(err, lifecycle.ErrBadAuthor) {
		return cli.Usagef("--author must be 'Name <email>', got %q", f.author)
	}
	if err != nil {
		return lifecycleError(err, f.format, io)
	}
	fmt.Fprintln(io.out, ch.Done)
	switch {
	case res.AlreadyCommitted:
		fmt.Fprintln(io.err, "HEAD already holds this change; nothing was committed")
	case res.Commit != "":
		fmt.Fprintf(io.out, "committed %s %s\n", short(res.Commit), res.Subject)
	}
	return nil
}

// lifecycleError prints what a lifecycle error holds and gives it its
// exit code: 1 for a change the apps repository refuses, 2 for the rest.
func lifecycleError(err error, format string, io stdio) error {
	var invalid *lifecycle.InvalidError
	var inUse *lifecycle.InUseError
	var refused *lifecycle.RefusedError
	switch {
	case errors.As(err, &invalid):
		rep := &cli.Reporter{Format: format, Out: io.err, Getenv: io.getenv}
		if err := rep.Report(invalid.Problems, nil); err != nil {
			return err
		}
		fmt.Fprintf(io.err, "render: the change would make the specs invalid; nothing was written\n")
		return cli.Failed()
	case errors.As(err, &inUse):
		fmt.Fprintf(io.err, "render: %s cannot be deleted: other apps use its exports:\n", inUse.App)
		for _, u := range inUse.Users {
			fmt.Fprintln(io.err, "  "+u)
		}
		return cli.Failed()
	case errors.As(err, &refused):
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	case errors.Is(err, lifecycle.ErrNoAuthor):
		return cli.Usagef("no commit author: pass --author 'Name <email>', or set git config user.name and user.email")
	}
	return &cli.ExitError{Code: cli.ExitUsage, Err: err}
}
