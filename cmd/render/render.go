package main

import (
	"context"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/spec"
)

func runRender(_ context.Context, _ []string, _ stdio) error {
	return cli.Usagef("rendering is not wired yet")
}

func exportCatalog() spec.ExportCatalog { return nil }
