package main

import (
	"context"
	"fmt"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec"
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
	var all spec.Problems
	apps, components := 0, 0
	seen := map[string]bool{}
	for _, p := range paths {
		root, err := cli.FindRoot(p)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		if seen[root] {
			continue
		}
		seen[root] = true
		repo, ps, err := render.Load(ctx, render.Dir(root))
		if err != nil {
			return err
		}
		all = append(all, ps...)
		apps += len(repo.Apps)
		for _, a := range repo.Apps {
			components += len(a.Spec.Components)
		}
	}
	all = all.Sort()
	rep := &cli.Reporter{Format: *format, Out: io.out, Getenv: io.getenv}
	if err := rep.Report(all, map[string]any{"apps": apps, "components": components}); err != nil {
		return err
	}
	errs := 0
	for _, p := range all {
		if p.Severity != spec.SeverityWarning {
			errs++
		}
	}
	if errs > 0 {
		if *format == "text" {
			fmt.Fprintf(io.err, "%d problem(s) found in %d app(s)\n", errs, apps)
		}
		return cli.Failed()
	}
	if *format == "text" {
		fmt.Fprintf(io.err, "%d app(s), %d component(s): valid\n", apps, components)
	}
	return nil
}
