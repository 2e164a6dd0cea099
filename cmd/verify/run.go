package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/verify"
)

type stdio struct {
	out, err io.Writer
	getenv   func(string) string
}

const usage = `verify checks a fleet folder the way Flux will see it.

Usage:
  verify [flags] [FLEET_DIR]

FLEET_DIR defaults to the apps repository's fleet folder when --apps is
given, else to the current folder. Exit status: 0 clean (warnings allowed),
1 findings at error level, 2 usage or I/O error.

Flags:
`

func run(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprint(io.err, usage)
		fs.PrintDefaults()
	}
	apps := fs.String("apps", "", "apps repository (or its platform.yaml): re-render its specs and fail on any difference")
	appsRef := fs.String("apps-ref", "", "read the apps repository at this Git ref instead of its work tree")
	platform := fs.String("platform", "", "platform.yaml to take the policy, clusters and fleet path from, without the drift check")
	fleetPath := fs.String("fleet-path", "", "the fleet folder's path inside the Git repository Flux reads (default: platform.yaml's fleet.path, else the folder's path in its Git work tree)")
	strictKinds := fs.Bool("strict-kinds", false, "objects of kinds without a known API type are errors, not warnings")
	fullBuild := fs.Bool("full-build", false, "build every Flux path with kustomize, even the plain ones render writes")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of a cluster: dry-run every object there and report live drift")
	kubeContext := fs.String("context", "", "kubeconfig context (default: its current context)")
	fieldManager := fs.String("field-manager", verify.DefaultFieldManager, "field manager Flux applies with, for live drift")
	format := fs.String("format", "text", "output format: text or json")
	// Flags may come before or after the folder.
	positional, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(positional) > 1:
		return cli.Usagef("verify takes one fleet folder, got %d", len(positional))
	case *format != "text" && *format != "json":
		return cli.Usagef("--format must be text or json")
	case *apps != "" && *platform != "":
		return cli.Usagef("--apps and --platform cannot be combined (--apps reads its platform.yaml)")
	case *appsRef != "" && *apps == "":
		return cli.Usagef("--apps-ref needs --apps")
	case *kubeContext != "" && *kubeconfig == "":
		return cli.Usagef("--context needs --kubeconfig")
	}
	fleetPathSet := false
	fs.Visit(func(f *flag.Flag) { fleetPathSet = fleetPathSet || f.Name == "fleet-path" })

	opts := verify.Options{StrictKinds: *strictKinds, FullBuild: *fullBuild}
	var specFindings []verify.Finding
	var appsRoot string
	switch {
	case *apps != "":
		root, err := cli.FindRoot(*apps)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		appsRoot = root
		repo, ps, err := render.LoadAt(ctx, root, *appsRef)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		specFindings = verify.SpecFindings(ps.Sort())
		opts.Platform = &repo.Platform
		if ps.HasErrors() {
			fmt.Fprintln(io.err, "verify: the specs are invalid; the drift check is skipped")
		} else {
			revs, err := specRevisions(ctx, root, cmp.Or(*appsRef, "HEAD"), repo)
			if err != nil {
				return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("reading the spec history: %w", err)}
			}
			opts.Apps = &verify.Apps{Repo: repo, SpecRevision: revs}
		}
	case *platform != "":
		plat, ps, err := loadPlatform(*platform)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		specFindings = verify.SpecFindings(ps.Sort())
		opts.Platform = plat
	}

	switch {
	case len(positional) == 1:
		opts.FleetDir = positional[0]
	case appsRoot != "":
		opts.FleetDir = filepath.Join(appsRoot, filepath.FromSlash(opts.Platform.Fleet.Path))
	default:
		opts.FleetDir = "."
	}
	switch {
	case fleetPathSet:
		opts.FleetPath = *fleetPath
	case opts.Platform != nil:
		opts.FleetPath = opts.Platform.Fleet.Path
	default:
		opts.FleetPath = gitPath(opts.FleetDir)
	}

	if *kubeconfig != "" {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: *kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: *kubeContext},
		).ClientConfig()
		if err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("reading %s: %w", *kubeconfig, err)}
		}
		opts.Live = &verify.Live{Config: cfg, FieldManager: *fieldManager}
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))

	rep, err := verify.Run(ctx, opts)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	rep.Merge(specFindings)
	w := &diag.Writer{Format: *format, Out: io.out, Getenv: io.getenv}
	if err := w.Write(rep.Output()); err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	if rep.Failed() {
		return cli.Failed()
	}
	return nil
}

// loadPlatform reads a platform.yaml on its own.
func loadPlatform(file string) (*spec.Platform, spec.Problems, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	l, err := spec.NewLoader(exports.Catalog{}, filepath.Dir(file))
	if err != nil {
		return nil, nil, err
	}
	repo, ps := l.LoadFiles(map[string][]byte{"platform.yaml": data})
	return &repo.Platform, ps, nil
}

// gitPath returns dir's slash path inside its Git work tree, or "" when it
// is not in one (or is its root).
func gitPath(dir string) string {
	if _, rel, ok := gitrepo.FindTop(dir); ok && rel != "." {
		return rel
	}
	return ""
}
