package main

import (
	"context"

	"github.com/fleetwright/fleetwright/internal/revision"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// specRevisions gives generate the spec revisions render gives it: both use
// package revision, so fleets compare equal.
func specRevisions(ctx context.Context, root, ref string, repo *load.Repo) (func(*load.LoadedApp) string, error) {
	return revision.Specs(ctx, root, ref, repo)
}
