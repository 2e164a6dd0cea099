package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec"
)

func exportCatalog() spec.ExportCatalog { return exports.Catalog{} }

func runRender(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render", io)
	out := fs.String("out", "", "fleet folder to write (default: platform.yaml's fleet.path inside the apps repository)")
	check := fs.Bool("check", false, "write nothing; exit 1 and print a diff when the fleet (in the folder, or on the fleet branch) differs")
	diff := fs.Bool("diff", false, "write nothing; print the diff with the folder, or the fleet branch")
	offline := fs.Bool("offline", false, "do not contact registries: keep image tags as written (with a warning naming them)")
	format := fs.String("format", "text", "problem output format: text or json")
	var lo landOptions
	fs.StringVar(&lo.mode, "mode", "", "how the fleet lands: dir (write --out), push (commit and push to the fleet branch) or pull-request (default: platform.yaml fleet.mode)")
	fs.StringVar(&lo.repoURL, "fleet-repo", "", "fleet repository URL for push and pull-request (default: platform.yaml fleet.repo, else the apps repository's origin)")
	fs.StringVar(&lo.base, "fleet-branch", "", "fleet branch (default: platform.yaml fleet.branch)")
	fs.StringVar(&lo.prBranch, "pr-branch", "fleetwright/render", "head branch of the fleet pull request")
	fs.StringVar(&lo.workdir, "workdir", "", "folder to clone the fleet repository into (default: a temporary folder)")
	fs.StringVar(&lo.ghRepo, "github-repo", "", "the fleet repository on GitHub as owner/name (default: from --fleet-repo)")
	fs.StringVar(&lo.ghAPI, "github-api", "", "GitHub API root (default: $GITHUB_API_URL or https://api.github.com/)")
	fs.StringVar(&lo.authorName, "author-name", "fleetwright", "author of fleet commits")
	fs.StringVar(&lo.authorMail, "author-email", "fleetwright@users.noreply.github.com", "e-mail of the author of fleet commits")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return cli.Usagef("render takes one apps repository path, got %d", fs.NArg())
	}
	if *check && *diff {
		return cli.Usagef("--check and --diff cannot be combined")
	}
	path := "."
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	root, err := cli.FindRoot(path)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	start := time.Now()
	repo, ps, err := loadRepo(root)
	if err != nil {
		return err
	}
	rep := &cli.Reporter{Format: *format, Out: io.err, Getenv: io.getenv}
	if len(ps) > 0 {
		if err := rep.Report(ps, nil); err != nil {
			return err
		}
	}
	if ps.HasErrors() {
		fmt.Fprintln(io.err, "render: the specs are invalid; nothing was written")
		return cli.Failed()
	}
	mode := lo.mode
	if mode == "" {
		mode = repo.Platform.Fleet.Mode
	}
	if mode != "dir" && mode != "push" && mode != "pull-request" {
		return cli.Usagef("--mode must be dir, push or pull-request")
	}
	outDir := *out
	if outDir == "" {
		outDir = filepath.Join(root, filepath.FromSlash(repo.Platform.Fleet.Path))
	}
	if mode == "dir" {
		if m := outInsideSpecs(root, outDir); m != "" {
			return cli.Usagef("the fleet folder %s would mix with the specs: %s; choose another with --out or platform.yaml's fleet.path", outDir, m)
		}
	}
	images, err := resolveImages(ctx, repo, root, *offline, io)
	if err != nil {
		return err
	}
	revs, err := specRevisions(ctx, root, repo)
	if err != nil {
		return fmt.Errorf("reading the spec history: %w", err)
	}
	opts := generate.Options{
		Platform:     &repo.Platform,
		SpecRevision: revs,
		Images:       images,
	}
	lo.mode, lo.check, lo.diff, lo.out = mode, *check, *diff, outDir
	l, err := newLanding(lo, root, repo, io)
	if err != nil {
		return err
	}
	if r, ok := l.sink.(sink.Reuser); ok {
		opts.Reuse = r.Reuse
	}
	f, err := generate.Render(repo, opts)
	if err != nil {
		return err
	}
	return landFleet(ctx, l, lo, f, len(repo.Apps), start, io)
}

// outInsideSpecs says why the folder outDir cannot hold the fleet of the
// apps repository at root, or "".
func outInsideSpecs(root, outDir string) string {
	absRoot, err1 := filepath.Abs(root)
	absOut, err2 := filepath.Abs(outDir)
	if err1 != nil || err2 != nil {
		return ""
	}
	rel, err := filepath.Rel(absRoot, absOut)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return spec.OverlapsSpecs(filepath.ToSlash(rel))
}

// setOutputs writes step outputs when running in GitHub Actions.
func setOutputs(io stdio, outputs map[string]string) error {
	if io.getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	a := githubactions.New(githubactions.WithGetenv(io.getenv), githubactions.WithWriter(io.out))
	keys := make([]string, 0, len(outputs))
	for k := range outputs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		a.SetOutput(k, outputs[k])
	}
	return nil
}
