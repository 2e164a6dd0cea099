package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// resolveImages builds the images of dockerfile and buildpack workloads and
// pins every image by digest (unless pinning is off or --offline). It
// returns the image of each workload node whose image render changes.
// Nothing is written to the fleet before it succeeds.
func resolveImages(ctx context.Context, repo *spec.Repo, root string, offline bool, io stdio) (map[string]string, error) {
	plat := &repo.Platform
	pin := plat.Pinning() && !offline
	images := map[string]string{}
	type ref struct {
		node string
		app  *spec.LoadedApp
		comp string
	}
	var toBuild []ref
	byImage := map[string][]string{} // image as written → nodes
	for _, a := range repo.Apps {
		for _, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if w == nil {
				continue
			}
			node := spec.NodeID(a, c.Name)
			switch w.BuildMode {
			case spec.BuildModeDockerfile, spec.BuildModeBuildpack:
				toBuild = append(toBuild, ref{node, a, c.Name})
			default:
				byImage[w.Image] = append(byImage[w.Image], node)
			}
		}
	}
	if len(toBuild) == 0 && !pin {
		warnUnpinned(byImage, offline, io)
		return images, nil
	}
	if offline && len(toBuild) > 0 {
		r := toBuild[0]
		return nil, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s: component %s builds its image, which needs a registry: run without --offline", r.app.Doc.File, r.comp)}
	}
	client := registry.New(registry.Options{
		Keychain: registry.Keychain(authn.DefaultKeychain, registry.GitHubCredentials{Token: io.getenv("GITHUB_TOKEN")}),
	})

	if len(toBuild) > 0 {
		if plat.Registry == "" {
			r := toBuild[0]
			return nil, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s: component %s builds its image, but platform.yaml sets no registry to push it to", r.app.Doc.File, r.comp)}
		}
		absRoot, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		cfg := build.Config{Registry: client, Pack: build.PackOptions{LookPath: exec.LookPath, Output: io.err}}
		if ext := plat.Build.External; ext != nil {
			cfg.External = &build.ExternalOptions{Command: ext.Command, Output: io.err}
		}
		builder, err := build.New(cfg)
		if err != nil {
			return nil, err
		}
		epoch := int64(0)
		if s := io.getenv("SOURCE_DATE_EPOCH"); s != "" {
			if epoch, err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, cli.Usagef("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
			}
		}
		jobs := map[string]build.Job{}
		for _, r := range toBuild {
			req := buildRequest(r.app, r.comp, plat, absRoot)
			req.Repo = strings.TrimSuffix(plat.Registry, "/") + "/" + req.Name
			req.SourceDateEpoch = epoch
			jobs[r.node] = build.Job{Name: r.node, Request: req}
		}
		// Build in the graph's order, a level at a time.
		all, err := repo.Graph.Levels()
		if err != nil {
			return nil, err
		}
		var levels [][]build.Job
		for _, lvl := range all {
			var l []build.Job
			for _, id := range lvl {
				if j, ok := jobs[id]; ok {
					l = append(l, j)
				}
			}
			if len(l) > 0 {
				levels = append(levels, l)
			}
		}
		results, err := build.RunLevels(ctx, builder, levels, build.RunOptions{Progress: io.err})
		if err != nil {
			var unsupported *build.UnsupportedError
			if errors.As(err, &unsupported) || errors.Is(err, build.ErrBuildpackUnsupported) {
				return nil, &cli.ExitError{Code: cli.ExitFailed, Err: err}
			}
			return nil, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("building images: %w", err)}
		}
		for node, res := range results {
			images[node] = res.Ref
		}
	}

	if !pin {
		warnUnpinned(byImage, offline, io)
		return images, nil
	}
	refs := make([]string, 0, len(byImage))
	for img := range byImage {
		refs = append(refs, img)
	}
	slices.Sort(refs)
	pinned, err := client.PinAll(ctx, refs)
	if err != nil {
		return nil, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("pinning images by digest (render --offline keeps tags): %w", err)}
	}
	for i, img := range refs {
		for _, node := range byImage[img] {
			images[node] = pinned[i]
		}
	}
	return images, nil
}

func warnUnpinned(byImage map[string][]string, offline bool, io stdio) {
	why := "pinning is off in platform.yaml"
	if offline {
		why = "--offline"
	}
	refs := make([]string, 0, len(byImage))
	for img := range byImage {
		if !strings.Contains(img, "@sha256:") {
			refs = append(refs, img)
		}
	}
	slices.Sort(refs)
	for i, img := range refs {
		if i == maxUnpinnedWarnings && len(refs) > i+1 {
			fmt.Fprintf(io.err, "warning: %d more image(s) are not pinned by digest (%s)\n", len(refs)-i, why)
			break
		}
		fmt.Fprintf(io.err, "warning: image %s is not pinned by digest (%s)\n", img, why)
	}
}

// maxUnpinnedWarnings bounds the images named one by one: a repository of
// thousands of apps gets a count for the rest, not thousands of lines.
const maxUnpinnedWarnings = 10

// buildRequest is the build of component comp of app a as render runs it,
// with the apps repository's files under root: its name, context,
// Dockerfile, arguments, target, platforms and mode.
func buildRequest(a *spec.LoadedApp, comp string, plat *spec.Platform, root string) build.Request {
	w := a.Component(comp).WorkloadSpec
	req := build.Request{
		Name:      a.Project + "/" + a.Spec.Name + "-" + comp,
		Root:      root,
		Platforms: plat.Build.Platforms,
		Mode:      build.ModeDockerfile,
	}
	ctxDir := "."
	if w.Build != nil {
		if w.Build.Context != "" {
			ctxDir = w.Build.Context
		}
		req.Dockerfile, req.BuildArgs, req.Target = w.Build.Dockerfile, w.Build.Args, w.Build.Target
	}
	if w.BuildMode == spec.BuildModeBuildpack {
		req.Mode = build.ModeBuildpack
	}
	req.Context = path.Join(path.Dir(a.File), ctxDir)
	return req
}
