package main

import (
	"context"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
)

// runRollback restores an app's folder as it was at a past revision and
// commits that as a new commit on top of the history.
func runRollback(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render rollback", io)
	f := addEditFlags(fs, true)
	to := fs.String("to", "", "the revision to restore: a commit, branch or tag, or with --webhook a deployment id")
	env := addEnvFlag(fs)
	wf := addWebhookFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *to == "" {
		return cli.Usagef("usage: render rollback APP [--env ENV] --to REF [--webhook URL --token-file F]")
	}
	o := lifecycleOptions(io, f.repo, pos[0])
	o.Environment = *env
	if o.Deployments, err = wf.deployments(); err != nil {
		return err
	}
	ch, err := lifecycle.Rollback(ctx, o, *to)
	return f.finish(ctx, o, ch, err, io)
}
