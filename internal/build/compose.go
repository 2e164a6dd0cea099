package build

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// Fallback builds with Primary and, when Primary reports an instruction it
// cannot execute (*UnsupportedError), with Secondary. A nil Secondary
// returns Primary's error.
type Fallback struct {
	Primary   Builder
	Secondary Builder
}

// Build implements Builder.
func (f Fallback) Build(ctx context.Context, req Request) (Result, error) {
	res, err := f.Primary.Build(ctx, req)
	var ue *UnsupportedError
	if err != nil && f.Secondary != nil && errors.As(err, &ue) {
		return f.Secondary.Build(ctx, req)
	}
	return res, err
}

// ByMode sends each request to the builder for its Mode.
type ByMode struct {
	Dockerfile Builder
	Buildpack  Builder
}

// Build implements Builder.
func (m ByMode) Build(ctx context.Context, req Request) (Result, error) {
	var b Builder
	switch req.Mode {
	case ModeDockerfile:
		b = m.Dockerfile
	case ModeBuildpack:
		b = m.Buildpack
	}
	if b == nil {
		return Result{}, buildErr(req.Name, fmt.Errorf("no builder for %s mode", req.Mode))
	}
	return b.Build(ctx, req)
}

// Config assembles the usual builder.
type Config struct {
	// Registry pulls, pushes and checks images. Required.
	Registry *registry.Client
	// Local configures the local builder's RUN: work and cache folders,
	// secrets, network, timeout, output. Its Registry, BuildPlatform and
	// Logger are the ones here.
	Local LocalOptions
	// External, when set, builds the Dockerfiles the local builder cannot,
	// and those with RUN: a team that sets it prefers its own runtime.
	// Its Registry defaults to the one above.
	External *ExternalOptions
	// Pack configures buildpack builds; its Registry defaults to the one
	// above. Without LookPath they fail with ErrBuildpackUnsupported.
	Pack PackOptions
	// BuildPlatform is the local builder's BUILDPLATFORM.
	BuildPlatform string
	Logger        *slog.Logger
}

// New returns a content-addressed builder: images are tagged with
// ContentTag, reused when the registry has them, else built locally (RUN
// included), with the external builder, when configured, for Dockerfiles
// with RUN or other instructions the local builder leaves to it, and pack
// for buildpack mode.
func New(cfg Config) (Builder, error) {
	if cfg.Registry == nil {
		return nil, errors.New("build: no registry client")
	}
	lopts := cfg.Local
	lopts.Registry, lopts.BuildPlatform, lopts.Logger = cfg.Registry, cfg.BuildPlatform, cfg.Logger
	lopts.NoRun = cfg.External != nil
	local, err := NewLocal(lopts)
	if err != nil {
		return nil, err
	}
	dockerfile := Fallback{Primary: local}
	if cfg.External != nil {
		opts := *cfg.External
		if opts.Registry == nil {
			opts.Registry = cfg.Registry
		}
		if opts.Logger == nil {
			opts.Logger = cfg.Logger
		}
		ext, err := NewExternal(opts)
		if err != nil {
			return nil, err
		}
		dockerfile.Secondary = ext
	}
	popts := cfg.Pack
	if popts.Registry == nil {
		popts.Registry = cfg.Registry
	}
	if popts.Logger == nil {
		popts.Logger = cfg.Logger
	}
	pack, err := NewPack(popts)
	if err != nil {
		return nil, err
	}
	return &ContentAddressed{
		Inner:    ByMode{Dockerfile: dockerfile, Buildpack: pack},
		Registry: cfg.Registry,
		Logger:   cfg.Logger,
	}, nil
}
