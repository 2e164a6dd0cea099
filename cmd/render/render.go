package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// renderFlags are the flags of a render into a folder or a fleet
// repository.
type renderFlags struct {
	out          string
	version      bool
	check, diff  bool
	offline      bool
	secrets      map[string]build.SecretSource
	format       string
	lo           sink.Config // the landing flags
	path         string      // the apps repository as given
	mode, outDir string      // resolved once the platform is known
}

func parseRenderFlags(args []string, io stdio) (*renderFlags, error) {
	var f renderFlags
	fs := newFlags("render", io)
	fs.StringVar(&f.out, "out", "", "fleet folder to write (default: platform.yaml's fleet.path inside the apps repository)")
	fs.BoolVar(&f.version, "version", false, "print the version, commit, build date and Go release (as render version)")
	fs.BoolVar(&f.check, "check", false, "write nothing; exit 1 and print a diff when the fleet (in the folder, or on the fleet branch) differs")
	fs.BoolVar(&f.diff, "diff", false, "write nothing; print the diff with the folder, or the fleet branch, and exit 1 when they differ (as --check)")
	fs.BoolVar(&f.offline, "offline", false, "do not contact registries: keep image tags as written (with a warning naming them)")
	fs.StringVar(&f.format, "format", "text", "output format of spec problems and of --check and --diff: text or json")
	fs.Func("build-secret", "a secret RUN --mount=type=secret,id=<id> can mount: id=<id>,env=<variable> or id=<id>,src=<file> (repeatable; wins over platform.yaml's build.secrets)", func(s string) error {
		id, src, err := build.ParseSecretFlag(s)
		if err != nil {
			return err
		}
		if f.secrets == nil {
			f.secrets = map[string]build.SecretSource{}
		}
		f.secrets[id] = src
		return nil
	})
	addLandingFlags(fs, &f.lo, "fleetwright/render", "platform.yaml fleet.mode")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 1 {
		return nil, cli.Usagef("render takes one apps repository path, got %d", fs.NArg())
	}
	if f.format != "text" && f.format != "json" {
		return nil, cli.Usagef("--format must be text or json")
	}
	if f.check && f.diff {
		return nil, cli.Usagef("--check and --diff cannot be combined")
	}
	f.path = "."
	if fs.NArg() == 1 {
		f.path = fs.Arg(0)
	}
	return &f, nil
}

// addLandingFlags adds the flags that say where the fleet lands; head is
// the default head branch of the fleet pull request, and modeDefault says
// what --mode defaults to.
func addLandingFlags(fs *flag.FlagSet, lo *sink.Config, head, modeDefault string) {
	fs.StringVar(&lo.Mode, "mode", "", "how the fleet lands: dir (write --out), push (commit and push to the fleet branch) or pull-request (default: "+modeDefault+")")
	fs.StringVar(&lo.RepoURL, "fleet-repo", "", "fleet repository URL for push and pull-request (default: platform.yaml fleet.repo, else the apps repository's origin)")
	fs.StringVar(&lo.Branch, "fleet-branch", "", "fleet branch (default: platform.yaml fleet.branch)")
	fs.StringVar(&lo.Head, "pr-branch", head, "head branch of the fleet pull request")
	fs.StringVar(&lo.Workdir, "workdir", "", "folder to clone the fleet repository into (default: a temporary folder)")
	fs.StringVar(&lo.GitHubRepo, "github-repo", "", "the fleet repository on GitHub as owner/name (default: from --fleet-repo)")
	fs.StringVar(&lo.GitHubAPI, "github-api", "", "GitHub API root (default: $GITHUB_API_URL or https://api.github.com/)")
	fs.StringVar(&lo.Author.Name, "author-name", "fleetwright", "author of fleet commits")
	fs.StringVar(&lo.Author.Email, "author-email", "fleetwright@users.noreply.github.com", "e-mail of the author of fleet commits")
}

// runRender loads and validates the specs, renders the fleet and lands it
// in a folder or the fleet repository.
func runRender(ctx context.Context, args []string, io stdio) error {
	f, err := parseRenderFlags(args, io)
	if err != nil {
		return err
	}
	if f.version {
		return runVersion(nil, io)
	}
	root, err := cli.FindRoot(f.path)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	start := time.Now()
	src := render.Dir(root)
	repo, ps, err := render.Load(ctx, src)
	if err != nil {
		return err
	}
	if err := cli.RequireApps("render", root, len(repo.Apps)); err != nil {
		return err
	}
	if w := cli.PlatformWarning(root, load.PlatformFileNames, load.DefaultAppsDomain, load.DefaultCluster, load.DefaultFleetPath); w != "" {
		fmt.Fprintln(io.err, w)
	}
	if err := reportSpecs(ps, f.format, io); err != nil {
		return err
	}
	if err := f.target(root, repo); err != nil {
		return err
	}
	progress := cli.NewProgress(io.err, cli.IsTerminal(io.err))
	if cli.IsTerminal(io.err) {
		f.lo.Progress = progress.StageWriter()
	}
	l, err := newLanding(f, root, repo, io)
	if err != nil {
		return err
	}
	l.progress = progress
	opts := render.Options{Source: src, Images: imageSource(f, root, io), SpecRevisions: true, Progress: progress}
	if r, ok := l.sink.(sink.Reuser); ok {
		opts.Reuse = r.Reuse
	}
	var before *sink.Before
	if pv, ok := l.sink.(sink.Previewer); ok {
		// Where the apps' Flux objects are decides how they move to their
		// projects' sources and namespaces (generate.Options.Previous).
		dirs := previousDirs(repo)
		if !f.check && !f.diff {
			dirs = append(dirs, render.PreviewFolders(&repo.Platform)...)
		}
		b, err := pv.Previous(ctx, dirs)
		if err != nil {
			return err
		}
		before = &b
		opts.Previous, opts.PreviousDir = before.Read, before.List
	}
	res, err := render.Render(ctx, repo, opts)
	progress.Done()
	if err != nil {
		return renderError(err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(io.err, "warning: %s\n", w)
	}
	if before != nil && !f.check && !f.diff {
		expirePreviews(l, &repo.Platform, *before, res.Fleet, previewClock(io), io)
	}
	if err := pushArtifacts(ctx, f, repo, res.Fleet, progress, io); err != nil {
		return err
	}
	return landFleet(ctx, l, f, res.Fleet, appCount(res.Summary.Apps, res.Summary.Copies), start, io)
}

// pushArtifacts pushes the components' OCI artifacts (platform.yaml
// fleet.artifacts) before the fleet that pins them lands. --check and
// --diff push nothing. --offline pushes nothing either, and keeps the apps
// it generated out of the fleet index, so that the next render generates
// them again and pushes their artifacts.
func pushArtifacts(ctx context.Context, f *renderFlags, repo *load.Repo, fl *generate.Fleet, progress *cli.Progress, io stdio) error {
	if repo.Platform.Fleet.Artifacts == nil || fl == nil || f.check || f.diff {
		return nil
	}
	if f.offline {
		apps := map[string]bool{}
		for _, x := range fl.Files {
			if x.App != "" {
				apps[x.App] = true
			}
		}
		if len(apps) > 0 {
			fmt.Fprintf(io.err, "warning: --offline: the artifacts of %d app(s) are not pushed to %s; Flux cannot pull them until a render without --offline pushes them\n",
				len(apps), repo.Platform.Fleet.Artifacts.Repository)
		}
		fl.Digests = nil
		return nil
	}
	res, err := render.PushArtifacts(ctx, &repo.Platform, fl, registryClient(io), progress)
	progress.Done()
	if err != nil {
		return err
	}
	if res.Pushed+res.Present > 0 {
		fmt.Fprintf(io.err, "artifacts: %d pushed to %s, %d already there\n", res.Pushed, res.Repository, res.Present)
	}
	return nil
}

// registryClient talks to registries with the machine's credentials
// (docker's config, credential helpers) and GITHUB_TOKEN for ghcr.io.
func registryClient(io stdio) *registry.Client {
	return registry.New(registry.Options{
		Keychain: registry.Keychain(authn.DefaultKeychain, registry.GitHubCredentials{Token: io.getenv("GITHUB_TOKEN")}),
	})
}

// reportSpecs prints the problems; with an error among them nothing is
// rendered.
func reportSpecs(ps load.Problems, format string, io stdio) error {
	rep := &cli.Reporter{Format: format, Out: io.err, Getenv: io.getenv}
	if len(ps) > 0 {
		if err := rep.Report(ps, nil); err != nil {
			return err
		}
	}
	if ps.HasErrors() {
		fmt.Fprintln(io.err, "render: the specs are invalid; nothing was written")
		return cli.Failed()
	}
	return nil
}

// target settles where the fleet goes: the mode and, for a folder, which.
func (f *renderFlags) target(root string, repo *load.Repo) error {
	f.mode = cmp.Or(f.lo.Mode, repo.Platform.Fleet.Mode)
	if f.mode != "dir" && f.mode != "push" && f.mode != "pull-request" {
		return cli.Usagef("--mode must be dir, push or pull-request")
	}
	f.outDir = cmp.Or(f.out, filepath.Join(root, filepath.FromSlash(repo.Platform.Fleet.Path)))
	return nil
}

// imageSource builds and pins the images, or offline names built images
// by their content tags and keeps the others as written.
func imageSource(f *renderFlags, root string, io stdio) render.ImageSource {
	if f.offline {
		return render.ContentTags{Unpinned: "--offline"}
	}
	return render.BuildAndPin{
		Registry:        registryClient(io),
		LookPath:        exec.LookPath,
		SourceDateEpoch: io.getenv("SOURCE_DATE_EPOCH"),
		Secrets:         f.secrets,
		AppsRoot:        root,
		LookupEnv: func(k string) (string, bool) {
			v := io.getenv(k)
			return v, v != ""
		},
	}
}

// renderError gives images that could not be made ready exit code 1.
func renderError(err error) error {
	var ie *render.ImageError
	if errors.As(err, &ie) {
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	return err
}

// previousDirs are the folders of the fleet a render reads before it
// writes: those of the apps' Flux objects, and the folders of the apps in
// an environment with promote_from, whose files it keeps as they are
// (generate.Options.Promote).
func previousDirs(repo *load.Repo) []string {
	apps := make([]layout.App, len(repo.Apps))
	for i, a := range repo.Apps {
		apps[i] = a.App()
	}
	dirs := layout.FluxDirs(&repo.Platform, apps)
	for _, a := range repo.Apps {
		if e := repo.Platform.EnvironmentByName(a.Environment); e != nil && !e.Rendered() {
			dirs = append(dirs, layout.AppDir(a.Cluster, a.Project, a.Spec.Name))
		}
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// expirePreviews has the landing of fl remove the previews older than
// previews.ttl (by their record's updated time): the landing then owns
// the previews' folders, fl carries the other previews' files as the
// fleet has them, and the expired ones go, each with a line in the output
// and in the fleet commit's message.
func expirePreviews(l landing, plat *spec.Platform, before sink.Before, fl *generate.Fleet, now time.Time, io stdio) {
	if plat.Previews == nil || fl == nil {
		return
	}
	open, broken := render.ReadPreviews(plat, before.Read, before.List)
	expired := render.Expired(plat, open, now)
	managed := sink.Managed(l.sink)
	if len(expired) == 0 && len(broken) == 0 || managed == nil {
		return
	}
	drop := map[int]bool{}
	for _, b := range broken {
		fmt.Fprintf(io.err, "warning: %s\n", b.Warning)
		drop[b.PR] = true
	}
	var lines []string
	for _, p := range expired {
		drop[p.PR] = true
		lines = append(lines, render.ExpiredLine(plat, p, now))
	}
	if pushOf(l.sink) != nil {
		// On the fleet branch, the removed previews' files only: a
		// preview pushed meanwhile stays (see runPreview).
		for _, pr := range slices.Sorted(maps.Keys(drop)) {
			*managed = append(*managed, layout.PreviewPaths(plat, plat.Previews.Cluster, pr)...)
		}
	} else {
		*managed = append(*managed, render.PreviewFolders(plat)...)
		keep := render.KeepPreviews(open, drop)
		for _, p := range slices.Sorted(maps.Keys(keep)) {
			fl.Files = append(fl.Files, generate.File{Path: p, Data: keep[p]})
		}
		slices.SortFunc(fl.Files, func(a, b generate.File) int { return strings.Compare(a.Path, b.Path) })
	}
	for _, line := range lines {
		fmt.Fprintln(io.err, line)
	}
	if p := pushOf(l.sink); p != nil && len(lines) > 0 {
		msg := p.Message
		p.Message = func(paths []string) string {
			m := sink.CommitMessage(paths, p.SpecCommit)
			if msg != nil {
				m = msg(paths)
			}
			return strings.TrimRight(m, "\n") + "\n\n" + strings.Join(lines, "\n") + "\n"
		}
	}
}
