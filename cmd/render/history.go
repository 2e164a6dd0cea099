package main

import (
	"context"
	"encoding/json"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
)

func runHistory(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render history", io)
	repoDir := fs.String("repo", ".", "the apps repository (or a folder inside it)")
	format := fs.String("format", "text", "output format: text or json")
	limit := fs.Int("limit", 50, "at most this many revisions and deployments (0: all)")
	env := addEnvFlag(fs)
	wf := addWebhookFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render history APP [--env ENV] [--webhook URL --token-file F] [--format text|json]")
	}
	if *format != "text" && *format != "json" {
		return cli.Usagef("--format must be text or json")
	}
	o := lifecycleOptions(io, *repoDir, pos[0])
	o.Environment = *env
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
	return h.WriteText(io.out, o.Deployments != nil)
}

func short(hash string) string { return hash[:min(len(hash), 12)] }
