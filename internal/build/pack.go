package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"

	"github.com/fleetwright/fleetwright/internal/registry"
)

// ErrBuildpackUnsupported is returned for buildpack builds where the pack
// CLI cannot be found.
var ErrBuildpackUnsupported = errors.New("buildpack builds need the pack CLI on PATH; not supported here")

// PackOptions configure a Pack builder.
type PackOptions struct {
	// LookPath finds the pack program (exec.LookPath); nil means pack is
	// not available.
	LookPath func(file string) (string, error)
	// Builder is the builder image; "" uses pack's configured default.
	Builder string
	// Env is pack's environment; nil inherits this process's.
	Env []string
	// Registry reads back the pushed digest. Required.
	Registry *registry.Client
	// Runner runs pack; nil means ExecRunner.
	Runner Runner
	// Output, when set, receives pack's output as it runs.
	Output io.Writer
	Logger *slog.Logger
}

// Pack builds with Cloud Native Buildpacks by running
// `pack build <image> --path <context> --publish`, passing build arguments
// as --env NAME=value and a single requested platform as --platform.
type Pack struct {
	opts PackOptions
	log  *slog.Logger
}

// NewPack returns a Pack builder.
func NewPack(opts PackOptions) (*Pack, error) {
	if opts.Registry == nil {
		return nil, errors.New("pack builder: no registry client")
	}
	if opts.Runner == nil {
		opts.Runner = ExecRunner{}
	}
	return &Pack{opts: opts, log: logger(opts.Logger)}, nil
}

// Build implements Builder. The request must carry a Tag.
func (p *Pack) Build(ctx context.Context, req Request) (Result, error) {
	single := len(req.Platforms) == 1
	req, _, err := req.normalize()
	if err != nil {
		return Result{}, err
	}
	if p.opts.LookPath == nil {
		return Result{}, buildErr(req.Name, ErrBuildpackUnsupported)
	}
	prog, err := p.opts.LookPath("pack")
	if err != nil {
		return Result{}, buildErr(req.Name, ErrBuildpackUnsupported)
	}
	req.Mode = ModeBuildpack
	ps, err := resolvePaths(req)
	if err != nil {
		return Result{}, buildErr(req.Name, err)
	}
	image := req.Repo + ":" + req.Tag
	args := []string{prog, "build", image, "--path", ps.dir, "--publish"}
	if p.opts.Builder != "" {
		args = append(args, "--builder", p.opts.Builder)
	}
	for _, k := range slices.Sorted(maps.Keys(req.BuildArgs)) {
		args = append(args, "--env", k+"="+req.BuildArgs[k])
	}
	var platforms []string
	if single {
		platforms = req.Platforms
		args = append(args, "--platform", req.Platforms[0])
	}
	var out tailBuffer
	var w io.Writer = &out
	if p.opts.Output != nil {
		w = io.MultiWriter(&out, p.opts.Output)
	}
	p.log.Debug("running pack", "build", req.Name, "image", image)
	if err := p.opts.Runner.Run(ctx, Command{Args: args, Env: p.opts.Env, Dir: ps.dir, Stdout: w, Stderr: w}); err != nil {
		return Result{}, buildErr(req.Name, &CommandError{Program: "pack", Output: out.String(), Err: err})
	}
	h, err := p.opts.Registry.Digest(ctx, image)
	if err != nil {
		return Result{}, buildErr(req.Name, fmt.Errorf("pack succeeded but the image cannot be read back: %w", err))
	}
	return Result{Ref: image + "@" + h.String(), Repo: req.Repo, Tag: req.Tag, Digest: h.String(), Platforms: platforms}, nil
}
