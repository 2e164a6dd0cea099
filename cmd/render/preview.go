package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// previewFlags are the flags of render preview.
type previewFlags struct {
	renderFlags
	pr            int
	base, head    string
	close         bool
	ghRepo, ghAPI string
}

func parsePreviewFlags(args []string, io stdio) (*previewFlags, error) {
	f := &previewFlags{}
	fs := newFlags("render preview", io)
	fs.IntVar(&f.pr, "pr", 0, "the pull request's number on the apps repository (default: from $GITHUB_EVENT_PATH)")
	fs.StringVar(&f.base, "base", "", "the pull request's base revision: the apps it changes are those whose folder differs from the merge base with it (default: the pull request's base from $GITHUB_EVENT_PATH, else origin/HEAD)")
	fs.StringVar(&f.head, "head", "", "the pull request's head revision, rendered (default: the pull request's head from $GITHUB_EVENT_PATH, else HEAD)")
	fs.BoolVar(&f.close, "close", false, "remove the pull request's preview (on close): Flux prunes it, its namespaces included")
	fs.StringVar(&f.path, "repo", ".", "the apps repository (or a folder inside it), a Git work tree")
	fs.StringVar(&f.out, "out", "", "fleet folder to write with --mode dir (default: platform.yaml's fleet.path inside the apps repository)")
	fs.BoolVar(&f.offline, "offline", false, "do not contact registries: name built images by their content tags and keep the others as written")
	fs.StringVar(&f.lo.Mode, "mode", "push", "how the preview lands: push (commit and push to the fleet branch; a preview is not reviewed) or dir (write --out)")
	fs.StringVar(&f.lo.RepoURL, "fleet-repo", "", "fleet repository URL (default: platform.yaml fleet.repo, else the apps repository's origin)")
	fs.StringVar(&f.lo.Branch, "fleet-branch", "", "fleet branch (default: platform.yaml fleet.branch)")
	fs.StringVar(&f.lo.Workdir, "workdir", "", "folder to clone the fleet repository into (default: a temporary folder)")
	fs.StringVar(&f.lo.Author.Name, "author-name", "fleetwright", "author of fleet commits")
	fs.StringVar(&f.lo.Author.Email, "author-email", "fleetwright@users.noreply.github.com", "e-mail of the author of fleet commits")
	fs.StringVar(&f.ghRepo, "github-repo", "", "owner/name of the apps repository, whose review comment's Preview section is kept up to date (default: $GITHUB_REPOSITORY)")
	fs.StringVar(&f.ghAPI, "github-api", "", "GitHub API root (default: $GITHUB_API_URL or https://api.github.com/)")
	f.format = "text"
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, cli.Usagef("render preview takes no arguments (the apps repository is --repo), got %q", pos[0])
	}
	if f.lo.Mode != "push" && f.lo.Mode != "dir" {
		return nil, cli.Usagef("--mode must be push or dir: a preview is pushed to the fleet branch directly, without a fleet pull request")
	}
	return f, nil
}

// runPreview renders pull request N's preview and pushes it, updates it,
// or with --close removes it; every run also removes the previews older
// than previews.ttl.
func runPreview(ctx context.Context, args []string, io stdio) error {
	f, err := parsePreviewFlags(args, io)
	if err != nil {
		return err
	}
	ev := review.ReadEvent(io.getenv("GITHUB_EVENT_PATH"))
	f.pr = cmp.Or(f.pr, ev.Number)
	if f.pr <= 0 {
		return cli.Usagef("usage: render preview --pr N [--base REV] [--head REV] [--close] (or a pull_request event in $GITHUB_EVENT_PATH)")
	}
	r := &previewRun{f: f, ev: ev, io: io, env: layout.PreviewEnvironment(f.pr), drop: map[int]bool{}}
	if err := r.load(ctx); err != nil {
		return err
	}
	defer r.g.Close()
	if err := r.readOpen(ctx); err != nil {
		return err
	}
	if f.close {
		r.drop[f.pr] = true
	} else if err := r.render(ctx); err != nil {
		return err
	}
	subject := r.subject()
	message := previewMessage(subject, r.head, r.rec, r.skipped, r.expired)
	if p := pushOf(r.l.sink); p != nil {
		p.Message = func([]string) string { return message }
		p.SpecCommit = r.head
	}
	res, err := r.l.sink.Land(ctx, r.fleet())
	if err != nil {
		return err
	}
	r.report(res, subject)
	content := previewSectionContent(f.pr, r.rec, r.skipped, f.close)
	fmt.Fprintln(io.out, content)
	outputs := map[string]string{"environment": r.env, "commit": res.Commit}
	if r.rec != nil {
		outputs["preview-url"] = firstURL(r.rec)
	}
	cli.SetOutputs(io.getenv, io.out, outputs)
	return updatePreviewSection(ctx, f, content, io)
}

// previewRun is one run of render preview, step by step: the apps
// repository at the head (load), the previews the fleet has and those to
// remove (readOpen), the pull request's preview (render), what the landing
// owns (fleet), and what it says (subject, report).
type previewRun struct {
	f   *previewFlags
	ev  review.Event
	io  stdio
	env string // the preview's environment, pr-N

	root string
	g    *render.GitRepo
	head string
	src  render.Source
	repo *load.Repo
	l    landing

	folders []string                    // the previews' folders (render.PreviewFolders)
	managed *[]string                   // what the sink owns
	open    map[int]*render.OpenPreview // the fleet's previews
	was     *render.OpenPreview         // this pull request's, if open
	drop    map[int]bool                // the previews removed
	expired []string                    // a line for each expired one
	now     time.Time

	files   []generate.File
	rec     *generate.PreviewRecord // nil: no preview
	skipped []load.Skipped
}

// load reads the apps repository at the head, and the landing.
func (r *previewRun) load(ctx context.Context) error {
	f := r.f
	root, err := cli.FindRoot(f.path)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	r.root = root
	if r.g, err = render.OpenGit(root); err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("render preview renders from the apps repository's history: %w", err)}
	}
	headRef := cmp.Or(f.head, r.ev.Head, "HEAD")
	if f.close {
		// A closed pull request's head may be gone: the checkout is
		// enough to read the platform.
		headRef = cmp.Or(f.head, "HEAD")
	}
	if r.head, err = r.g.Resolve(headRef); err != nil {
		r.g.Close()
		return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("--head %s: %w", headRef, err)}
	}
	err = r.loadSpecs(ctx)
	if err != nil {
		r.g.Close()
	}
	return err
}

// loadSpecs loads the specs at the head; closing needs the platform only.
func (r *previewRun) loadSpecs(ctx context.Context) error {
	f := r.f
	r.src = r.g.At(r.head)
	repo, ps, err := render.Load(ctx, r.src)
	if err != nil {
		return err
	}
	if f.close {
		// Closing needs the platform only: the apps' problems do not stop it.
		ps = slices.DeleteFunc(ps, func(p *diag.Diagnostic) bool {
			dir := filepath.Dir(p.File)
			return !slices.Contains(load.PlatformFileNames, filepath.Base(p.File)) || (dir != "." && filepath.Clean(dir) != filepath.Clean(r.root))
		})
	}
	if err := reportSpecs(ps, f.format, r.io); err != nil {
		return err
	}
	if repo.Platform.Previews == nil {
		return cli.Usagef("platform.yaml declares no previews: add a previews block {cluster, apps_domain, ttl, max} (docs/environments.md, \"Previews\")")
	}
	if err := f.target(r.root, repo); err != nil {
		return err
	}
	r.repo = repo
	r.l, err = newLanding(&f.renderFlags, r.root, repo, r.io)
	return err
}

// readOpen reads the fleet's previews, and marks the broken and expired
// ones (this pull request's aside, unless it closes) to be removed.
func (r *previewRun) readOpen(ctx context.Context) error {
	plat := &r.repo.Platform
	r.folders = render.PreviewFolders(plat)
	r.managed = sink.Managed(r.l.sink)
	if r.managed == nil {
		return fmt.Errorf("render preview cannot land in this sink")
	}
	*r.managed = nil // a preview owns its own files, and nothing else (fleet)
	before, err := r.l.sink.(sink.Previewer).Previous(ctx, r.folders)
	if err != nil {
		return err
	}
	open, broken := render.ReadPreviews(plat, before.Read, before.List)
	r.open, r.was, r.now = open, open[r.f.pr], previewClock(r.io)
	for _, b := range broken {
		fmt.Fprintf(r.io.err, "warning: %s\n", b.Warning)
		r.drop[b.PR] = true
	}
	for _, p := range render.Expired(plat, open, r.now) {
		if p.PR == r.f.pr && !r.f.close {
			continue // updated now
		}
		r.drop[p.PR] = true
		r.expired = append(r.expired, render.ExpiredLine(plat, p, r.now))
	}
	return nil
}

// render renders the pull request's preview: the apps it changes and
// those they reference, with images built from the head, their artifacts
// pushed. A pull request that changes no app that previews removes its
// preview.
func (r *previewRun) render(ctx context.Context) error {
	f, io := r.f, r.io
	baseRef := cmp.Or(f.base, r.ev.Base)
	if baseRef == "" {
		baseRef = defaultBase(r.g)
	}
	if baseRef == "" {
		return cli.Usagef("render preview needs --base (the pull request's base), a pull_request event in $GITHUB_EVENT_PATH, or origin/HEAD")
	}
	changed, err := r.g.ChangedApps(ctx, baseRef, r.head, r.repo)
	if err != nil {
		return fmt.Errorf("finding the apps the pull request changes: %w", err)
	}
	loader, err := render.NewLoader(r.root)
	if err != nil {
		return err
	}
	prev, pps := loader.PreviewOf(r.repo, f.pr, changed)
	if !pps.HasErrors() {
		// The patches, on the preview's copies: one that sets a host
		// the preview does not own (a production host) is refused.
		pps = append(pps, render.CheckPatches(prev.Repo)...).Sort()
	}
	if err := reportSpecs(pps, f.format, io); err != nil {
		return err
	}
	r.skipped = prev.Skipped
	if len(prev.Apps) == 0 {
		r.drop[f.pr] = true
		return nil
	}
	if r.was == nil {
		if err := checkPreviewMax(&r.repo.Platform, r.open, r.drop, f.pr); err != nil {
			return err
		}
	}
	// Built from the head (its tree, not the checkout), named and
	// pinned as render names a project's images.
	progress := cli.NewProgress(io.err, cli.IsTerminal(io.err))
	images, err := imageSource(&f.renderFlags, r.root, io).Images(ctx, render.ImageInput{Repo: prev.Build, Source: r.src, Progress: progress})
	progress.Done()
	if err != nil {
		return renderError(err)
	}
	for _, w := range images.Warnings {
		fmt.Fprintf(io.err, "warning: %s\n", w)
	}
	in := render.PreviewInput{Preview: prev, Head: r.head, Images: images.ByNode, Now: r.now}
	if r.was != nil {
		in.Was = r.was.Record
	}
	fl, rec, err := render.RenderPreview(in)
	if err != nil {
		return err
	}
	// With fleet.artifacts, the artifacts the preview pins go first.
	artifacts := cli.NewProgress(io.err, cli.IsTerminal(io.err))
	if err := pushArtifacts(ctx, &f.renderFlags, r.repo, fl, artifacts, io); err != nil {
		return err
	}
	r.files, r.rec = fl.Files, rec
	return nil
}

// fleet is what the landing writes, and sets what it owns: on the fleet
// branch, the files of this preview and of those removed, each preview's
// folder and Flux file, so that a retry after another preview's push
// (gitrepo.Land applies the change again on the new head) leaves that one
// alone; in a folder, the previews' folders, with the files of the
// previews that stay as the fleet has them.
func (r *previewRun) fleet() *generate.Fleet {
	plat, pr := &r.repo.Platform, r.f.pr
	out := &generate.Fleet{Files: r.files}
	if pushOf(r.l.sink) != nil {
		*r.managed = layout.PreviewPaths(plat, plat.Previews.Cluster, pr)
		for _, n := range slices.Sorted(maps.Keys(r.drop)) {
			if n != pr {
				*r.managed = append(*r.managed, layout.PreviewPaths(plat, plat.Previews.Cluster, n)...)
			}
		}
	} else {
		*r.managed = r.folders
		keep := render.KeepPreviews(r.open, r.drop)
		if r.rec != nil {
			for p := range keep {
				if cl, n, ok := layout.PreviewOfPath(p); ok && cl == plat.Previews.Cluster && n == pr {
					delete(keep, p)
				}
			}
			delete(keep, layout.PreviewFile(plat, plat.Previews.Cluster, pr))
		}
		for _, p := range slices.Sorted(maps.Keys(keep)) {
			out.Files = append(out.Files, generate.File{Path: p, Data: keep[p]})
		}
	}
	slices.SortFunc(out.Files, func(a, b generate.File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// subject is the fleet commit's subject.
func (r *previewRun) subject() string {
	switch {
	case r.f.close:
		return "fleetwright: close preview " + r.env
	case r.rec == nil:
		return "fleetwright: remove preview " + r.env + " (no app to preview)"
	case r.was == nil:
		return fmt.Sprintf("fleetwright: open preview %s (%s)", r.env, strings.Join(r.rec.Apps, ", "))
	default:
		return fmt.Sprintf("fleetwright: update preview %s (%s)", r.env, strings.Join(r.rec.Apps, ", "))
	}
}

// report says what the run did.
func (r *previewRun) report(res sink.Result, subject string) {
	io, env := r.io, r.env
	for _, line := range r.expired {
		fmt.Fprintln(io.err, line)
	}
	switch {
	case r.f.close && r.was == nil:
		fmt.Fprintf(io.err, "no preview %s to close\n", env)
	case r.f.close:
		fmt.Fprintf(io.err, "preview %s closed: its files are removed, and Flux prunes it\n", env)
	case r.rec == nil && r.was != nil:
		fmt.Fprintf(io.err, "preview %s removed: the pull request changes no app that previews\n", env)
	case r.rec == nil:
		fmt.Fprintf(io.err, "no preview for %s: the pull request changes no app that previews\n", env)
	case res.Empty():
		fmt.Fprintf(io.err, "preview %s is up to date at %s\n", env, short(r.head))
	case res.Commit != "":
		fmt.Fprintf(io.err, "pushed %s to %s: %s\n", short(res.Commit), r.l.branch, subject)
	default:
		fmt.Fprintf(io.err, "preview %s written to %s (%d file(s) written, %d deleted)\n", env, r.l.where, res.Written, res.Deleted)
	}
	for _, s := range r.skipped {
		fmt.Fprintf(io.err, "skipped %s: %s\n", s.App, s.Reason)
	}
}

// checkPreviewMax refuses a new preview when previews.max are open (those
// about to be removed aside).
func checkPreviewMax(plat *spec.Platform, open map[int]*render.OpenPreview, drop map[int]bool, pr int) error {
	var names []string
	for _, n := range slices.Sorted(maps.Keys(open)) {
		if !drop[n] && n != pr {
			names = append(names, layout.PreviewEnvironment(n))
		}
	}
	if limit := plat.Previews.MaxOpen(); len(names) >= limit {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%w: %d previews are open (%s), previews.max is %d; no preview for pull request #%d until one closes or expires (previews.ttl %s)",
			render.ErrPreviewLimit, len(names), strings.Join(names, ", "), limit, pr, plat.Previews.TTLDuration())}
	}
	return nil
}

// defaultBase is the apps repository's default branch, as the origin
// names it, for a run without --base or a pull_request event.
func defaultBase(g *render.GitRepo) string {
	for _, ref := range []string{"origin/HEAD", "origin/main", "main", "origin/master", "master"} {
		if _, err := g.Resolve(ref); err == nil {
			return ref
		}
	}
	return ""
}

// previewClock is the time of the run: SOURCE_DATE_EPOCH when set (so
// that the record, and a test, are reproducible), else now.
func previewClock(io stdio) time.Time {
	if s := io.getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}

// previewMessage is the fleet commit's message.
func previewMessage(subject, head string, rec *generate.PreviewRecord, skipped []load.Skipped, expired []string) string {
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	if rec != nil {
		for _, a := range rec.Apps {
			fmt.Fprintf(&b, "%s: %s\n", a, strings.Join(rec.URLs[a], " "))
		}
	}
	for _, s := range skipped {
		fmt.Fprintf(&b, "skipped %s: %s\n", s.App, s.Reason)
	}
	for _, line := range expired {
		b.WriteString(line + "\n")
	}
	b.WriteString("\nSpec-Commit: " + head + "\n")
	return b.String()
}

// previewSectionContent is the Preview section of the review comment as
// render preview writes it: the apps deployed and their addresses, the
// apps skipped, or that the preview is closed.
func previewSectionContent(pr int, rec *generate.PreviewRecord, skipped []load.Skipped, closed bool) string {
	p := review.Preview{PR: pr, State: review.PreviewDeploying}
	if closed {
		p.State = review.PreviewClosed
	}
	if rec != nil {
		p.Head = rec.Head
		for _, a := range rec.Apps {
			p.Apps = append(p.Apps, review.PreviewApp{Name: a, URLs: rec.URLs[a]})
		}
	}
	for _, s := range skipped {
		p.Skipped = append(p.Skipped, review.PreviewSkip{App: s.App, Reason: s.Reason})
	}
	return review.PreviewContent(p)
}

func firstURL(rec *generate.PreviewRecord) string {
	for _, a := range rec.Apps {
		if len(rec.URLs[a]) > 0 {
			return rec.URLs[a][0]
		}
	}
	return ""
}

// updatePreviewSection writes the Preview section of the pull request's
// review comment, with a GitHub token and repository; without, nothing.
func updatePreviewSection(ctx context.Context, f *previewFlags, content string, io stdio) error {
	client, r, ok, err := githubClient(f.ghRepo, f.ghAPI, io)
	if err != nil || !ok {
		return err
	}
	edited, err := client.UpdateCommentSection(ctx, r, f.pr, review.Marker, review.PreviewSection, content)
	if err != nil {
		return fmt.Errorf("updating the review comment's preview section: %w", err)
	}
	if edited {
		fmt.Fprintf(io.err, "review comment on #%d: preview section updated\n", f.pr)
	}
	return nil
}
