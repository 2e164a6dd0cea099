package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
	"github.com/fleetwright/fleetwright/internal/verify"
)

type stdio struct {
	out, err io.Writer
	getenv   func(string) string
	// onHelp, when set, receives the flags instead of the help being
	// printed (the completion scripts read them so).
	onHelp func(*flag.FlagSet)
}

// help describes verify for --help, help and the completion scripts.
func help() *cli.Help {
	return &cli.Help{Program: "verify", Commands: []cli.Command{
		{Summary: "verify checks a fleet folder the way Flux will see it.", Args: "[FLEET_DIR]",
			Long: "FLEET_DIR defaults to the apps repository's fleet folder when --apps is given, else to the\n" +
				"current folder; it must hold the cluster folders render writes (clusters/<cluster>/).\n" +
				"Exit status: 0 clean (warnings allowed), 1 findings at error level, 2 usage or I/O error.",
			Examples: []string{
				"verify fleet                          # build and check every Flux path of ./fleet",
				"verify --apps .                       # also re-render the specs and fail on any drift",
				"verify --apps . --apps-ref origin/main --format json",
				"verify --kubeconfig ~/.kube/config    # also dry-run every object on the cluster",
			}},
		cli.VersionCommand("verify"),
		cli.HelpCommand("verify"),
		cli.CompletionCommand("verify"),
	}}
}

// flags are verify's flags.
type flags struct {
	apps, appsRef, platform string
	fleetPath               string
	fleetPathSet            bool
	version                 bool
	strictKinds, fullBuild  bool
	artifacts               bool
	artifactsConcurrency    int
	kubeconfig, kubeContext string
	fieldManager, format    string
	positional              []string
}

func parseFlags(args []string, io stdio) (*flags, error) {
	var f flags
	fs := help().FlagSet("", io.out, io.err, io.onHelp)
	fs.BoolVar(&f.version, "version", false, "print the version, commit, build date and Go release (as verify version)")
	fs.StringVar(&f.apps, "apps", "", "apps repository (or its platform.yaml): re-render its specs and fail on any difference")
	fs.StringVar(&f.appsRef, "apps-ref", "", "read the apps repository at this Git ref instead of its work tree")
	fs.StringVar(&f.platform, "platform", "", "platform.yaml to take the policy, clusters and fleet path from, without the drift check")
	fs.StringVar(&f.fleetPath, "fleet-path", "", "the fleet folder's path inside the Git repository Flux reads (default: platform.yaml's fleet.path, else the folder's path in its Git work tree)")
	fs.BoolVar(&f.strictKinds, "strict-kinds", false, "objects of kinds without a known API type are errors, not warnings")
	fs.BoolVar(&f.fullBuild, "full-build", false, "build every Flux path with kustomize, even the plain ones render writes")
	fs.BoolVar(&f.artifacts, "artifacts", false, "also look up every artifact the fleet pins (components' and projects') in its registry (HEAD by digest), and pull those whose digest is not their folder's to name the files that differ; credentials from the Docker configuration, and GITHUB_TOKEN for ghcr.io")
	fs.IntVar(&f.artifactsConcurrency, "artifacts-concurrency", registry.DefaultConcurrency, "registry requests in flight at once for --artifacts")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of a cluster: dry-run every object there and report live drift")
	fs.StringVar(&f.kubeContext, "context", "", "kubeconfig context (default: its current context)")
	fs.StringVar(&f.fieldManager, "field-manager", verify.DefaultFieldManager, "field manager Flux applies with, for live drift")
	fs.StringVar(&f.format, "format", "text", "output format: text or json")
	// Flags may come before or after the folder.
	positional, err := cli.ParseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	f.positional = positional
	fs.Visit(func(fl *flag.Flag) { f.fleetPathSet = f.fleetPathSet || fl.Name == "fleet-path" })
	return &f, f.Validate()
}

// Validate refuses flags that do not go together.
func (f *flags) Validate() error {
	switch {
	case len(f.positional) > 1:
		return cli.Usagef("verify takes one fleet folder, got %d", len(f.positional))
	case f.format != "text" && f.format != "json":
		return cli.Usagef("--format must be text or json")
	case f.apps != "" && f.platform != "":
		return cli.Usagef("--apps and --platform cannot be combined (--apps reads its platform.yaml)")
	case f.appsRef != "" && f.apps == "":
		return cli.Usagef("--apps-ref needs --apps")
	case f.kubeContext != "" && f.kubeconfig == "":
		return cli.Usagef("--context needs --kubeconfig")
	case f.artifactsConcurrency < 1:
		return cli.Usagef("--artifacts-concurrency must be at least 1")
	}
	return nil
}

func run(ctx context.Context, args []string, io stdio) error {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			return runVersion(args[1:], io)
		case "help":
			return runHelp(ctx, args[1:], io)
		case "completion":
			return runCompletion(ctx, args[1:], io)
		}
		if h := help(); isVerb(args[0]) && (len(args) == 1 || len(cli.Suggest(args[0], h.Names())) > 0) {
			return h.UnknownCommand(args[0])
		}
	}
	f, err := parseFlags(args, io)
	if err != nil {
		return err
	}
	if f.version {
		return runVersion(nil, io)
	}
	opts := verify.Options{StrictKinds: f.strictKinds, FullBuild: f.fullBuild}
	specFindings, appsRoot, err := f.loadSpecs(ctx, &opts, io)
	if err != nil {
		return err
	}
	f.fleet(&opts, appsRoot)
	// A folder the user named, or the current one, must be a fleet; the
	// apps repository's own fleet folder (--apps without FLEET_DIR) is
	// the one its platform.yaml names.
	if len(f.positional) == 1 || appsRoot == "" {
		if err := cli.RequireFleet(opts.FleetDir, clusterDirs(opts.Platform)); err != nil {
			return err
		}
	}
	if opts.Live, err = f.live(); err != nil {
		return err
	}
	progress := cli.NewProgress(io.err, cli.IsTerminal(io.err))
	defer progress.Done()
	opts.Logger = cli.ProgressLogger(progress)
	if f.artifacts {
		opts.Registry = &verify.RegistryCheck{
			Client: registry.New(registry.Options{
				Keychain: registry.Keychain(authn.DefaultKeychain, registry.GitHubCredentials{Token: io.getenv("GITHUB_TOKEN")}),
			}),
			Concurrency: f.artifactsConcurrency,
		}
	}

	rep, err := verify.Run(ctx, opts)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	rep.Merge(specFindings)
	w := &diag.Writer{Format: f.format, Out: io.out, Getenv: io.getenv}
	if err := w.Write(rep.Output()); err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	if rep.Failed() {
		return cli.Failed()
	}
	return nil
}

// loadSpecs reads the apps repository (--apps) or the platform.yaml
// (--platform) into opts and returns their problems as findings, and the
// apps repository's root.
func (f *flags) loadSpecs(ctx context.Context, opts *verify.Options, io stdio) ([]verify.Finding, string, error) {
	switch {
	case f.apps != "":
		root, err := cli.FindRoot(f.apps)
		if err != nil {
			return nil, "", &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		repo, ps, err := render.LoadAt(ctx, root, f.appsRef)
		if err != nil {
			return nil, "", &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		opts.Platform = &repo.Platform
		if ps.HasErrors() {
			fmt.Fprintln(io.err, "verify: the specs are invalid; the drift check is skipped")
		} else {
			revs, err := specRevisions(ctx, root, cmp.Or(f.appsRef, "HEAD"), repo)
			if err != nil {
				return nil, "", &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("reading the spec history: %w", err)}
			}
			opts.Apps = &verify.Apps{Repo: repo, SpecRevision: revs, AtRelease: func(ctx context.Context, ref string, folders map[string]string) (*load.Repo, error) {
				return render.LoadRelease(ctx, root, ref, folders)
			}}
		}
		return verify.SpecFindings(ps.Sort()), root, nil
	case f.platform != "":
		plat, ps, err := loadPlatform(f.platform)
		if err != nil {
			return nil, "", &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
		opts.Platform = plat
		return verify.SpecFindings(ps.Sort()), "", nil
	}
	return nil, "", nil
}

// fleet settles the fleet folder and its path in the Git repository Flux
// reads.
func (f *flags) fleet(opts *verify.Options, appsRoot string) {
	switch {
	case len(f.positional) == 1:
		opts.FleetDir = f.positional[0]
	case appsRoot != "":
		opts.FleetDir = filepath.Join(appsRoot, filepath.FromSlash(opts.Platform.Fleet.Path))
	default:
		opts.FleetDir = "."
	}
	switch {
	case f.fleetPathSet:
		opts.FleetPath = f.fleetPath
	case opts.Platform != nil:
		opts.FleetPath = opts.Platform.Fleet.Path
	default:
		opts.FleetPath = gitPath(opts.FleetDir)
	}
}

// live is the cluster of --kubeconfig, or nil.
func (f *flags) live() (*verify.Live, error) {
	if f.kubeconfig == "" {
		return nil, nil
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: f.kubeContext},
	).ClientConfig()
	if err != nil {
		return nil, &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("reading %s: %w", f.kubeconfig, err)}
	}
	return &verify.Live{Config: cfg, FieldManager: f.fieldManager}, nil
}

// clusterDirs are the cluster folders of the platform, if known.
func clusterDirs(p *spec.Platform) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, c := range p.Clusters {
		out = append(out, c.Path)
	}
	return out
}

// isVerb tells a mistyped command from a fleet folder: a word that is no
// flag and names no file or folder.
func isVerb(s string) bool {
	if strings.HasPrefix(s, "-") || strings.ContainsAny(s, "/.") {
		return false
	}
	_, err := os.Stat(s)
	return err != nil
}

// loadPlatform reads a platform.yaml on its own.
func loadPlatform(file string) (*spec.Platform, load.Problems, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	l, err := validate.NewLoader(exports.Catalog{}, filepath.Dir(file))
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
