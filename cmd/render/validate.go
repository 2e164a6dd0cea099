package main

import (
	"context"
	"fmt"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/render"
)

func runValidate(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render validate", io)
	format := fs.String("format", "text", "output format: text or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return cli.Usagef("--format must be text or json")
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var v render.Validation
	for _, p := range paths {
		root, err := cli.FindRoot(p)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		if err := v.Add(ctx, root); err != nil {
			return err
		}
	}
	apps, components := v.Apps, v.Components
	count := appCount(apps, v.Copies)
	if len(paths) == 1 {
		root, err := cli.FindRoot(paths[0])
		if err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		if err := cli.RequireApps("render validate", root, apps); err != nil {
			return err
		}
	}
	rep := &cli.Reporter{Format: *format, Out: io.out, Getenv: io.getenv}
	if err := rep.Report(v.Problems.Sort(), map[string]any{"apps": apps, "copies": v.Copies, "components": components}); err != nil {
		return err
	}
	if errs := v.Errors(); errs > 0 {
		if *format == "text" {
			fmt.Fprintf(io.err, "%d problem(s) found in %s\n", errs, count)
		}
		return cli.Failed()
	}
	if *format == "text" {
		fmt.Fprintf(io.err, "%s, %d component(s): valid\n", count, components)
	}
	return nil
}

// appCount says how many apps there are and, when environments hold
// several copies of them, how many copies.
func appCount(apps, copies int) string {
	if copies == apps {
		return fmt.Sprintf("%d app(s)", apps)
	}
	return fmt.Sprintf("%d app(s) (%d copies across environments)", apps, copies)
}
