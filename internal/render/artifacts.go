package render

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// ArtifactsResult is what PushArtifacts did.
type ArtifactsResult struct {
	Repository string
	artifact.PushResult
}

// PushArtifacts pushes the OCI artifact of every component folder the
// render generated (apps reused are in place, and so are their artifacts)
// to platform.yaml's fleet.artifacts repository, with reg's credentials.
// It must run before the fleet lands: a fleet commit pins the digests,
// and Flux pulls them as soon as it is merged. An artifact the registry
// has already costs one HEAD request. Without fleet.artifacts it does
// nothing.
func PushArtifacts(ctx context.Context, plat *spec.Platform, f *generate.Fleet, reg *registry.Client, p Progress) (ArtifactsResult, error) {
	cfg := plat.Fleet.Artifacts
	if cfg == nil || f == nil {
		return ArtifactsResult{}, nil
	}
	res := ArtifactsResult{Repository: cfg.Repository}
	arts, err := f.Artifacts()
	if err != nil {
		return res, err
	}
	if len(arts) == 0 {
		return res, nil
	}
	progressOr(p).Stage(fmt.Sprintf("pushing %d component artifact(s) to %s", len(arts), cfg.Repository))
	nameOpts := reg.NameOptions()
	if cfg.Insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	res.PushResult, err = artifact.Push(ctx, cfg.Repository, arts, artifact.PushOptions{
		Remote: reg.RemoteOptions(ctx), Name: nameOpts,
	})
	if err != nil {
		return res, fmt.Errorf("pushing the fleet's artifacts to %s (platform.yaml fleet.artifacts.repository): %w", cfg.Repository, err)
	}
	return res, nil
}
