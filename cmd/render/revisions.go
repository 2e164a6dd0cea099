package main

import (
	"context"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	rev "github.com/fleetwright/fleetwright/internal/revision"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// specRevisions are the spec commits render writes on each app's Flux
// objects (see package revision).
func specRevisions(ctx context.Context, root string, repo *spec.Repo) (func(*spec.LoadedApp) string, error) {
	return rev.Specs(ctx, root, "HEAD", repo)
}

func gitTop(dir string) (top, rel string, ok bool) { return gitrepo.FindTop(dir) }
