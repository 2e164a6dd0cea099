package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// promoteMarker finds the promotion's comment on its pull request again.
const promoteMarker = "<!-- fleetwright:promotion -->"

// promoteFlags are the flags of render promote.
type promoteFlags struct {
	renderFlags
	to, from, reason string
	force            bool
	webhook          *webhookFlags
	apps             []string
}

func parsePromoteFlags(args []string, io stdio) (*promoteFlags, error) {
	f := &promoteFlags{}
	fs := newFlags("render promote", io)
	fs.StringVar(&f.to, "to", "", "the environment to promote into (one with promote_from)")
	fs.StringVar(&f.from, "from", "", "the environment promoted from (default: the target's promote_from)")
	fs.BoolVar(&f.force, "force", false, "promote although the webhook's verdict is not running with every check green (needs --reason)")
	fs.StringVar(&f.reason, "reason", "", "why --force promotes: recorded in the fleet commit")
	fs.StringVar(&f.path, "repo", ".", "the apps repository (or a folder inside it), a Git work tree")
	fs.StringVar(&f.out, "out", "", "fleet folder to write with --mode dir (default: platform.yaml's fleet.path inside the apps repository)")
	fs.BoolVar(&f.offline, "offline", false, "do not contact registries: keep image tags as written (with a warning naming them)")
	f.webhook = addWebhookFlags(fs)
	f.format = "text"
	addLandingFlags(fs, &f.lo, "", "pull-request")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if f.to == "" {
		return nil, cli.Usagef("usage: render promote [APP…] --to ENV [--from ENV] --webhook URL --token-file F [--force --reason TEXT]")
	}
	if f.force && strings.TrimSpace(f.reason) == "" {
		return nil, cli.Usagef("--force needs --reason: why the release is promoted without the webhook's verdict")
	}
	if !f.force && f.webhook.url == "" {
		return nil, cli.Usagef("render promote asks the webhook whether the release runs in the source environment: set --webhook (or --force --reason)")
	}
	if f.lo.Mode == "" {
		f.lo.Mode = "pull-request" // a promotion is reviewed
	}
	if f.lo.Head == "" {
		f.lo.Head = "fleetwright/promote-" + f.to
	}
	f.apps = pos
	return f, nil
}

// promotion is one app's move from the source environment to the target.
type promotion struct {
	target  *load.LoadedApp   // the app's copy in the target environment (at HEAD)
	from    *generate.Release // the source environment's release
	was     *generate.Release // the target's release before, nil for a first promotion
	verdict *api.Deployment   // the webhook's deployment that passed, nil with --force
}

// runPromote renders apps into an environment with promote_from at the
// release that runs in the environment it is promoted from, and lands the
// change as render does.
func runPromote(ctx context.Context, args []string, io stdio) error {
	f, err := parsePromoteFlags(args, io)
	if err != nil {
		return err
	}
	root, err := cli.FindRoot(f.path)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	g, err := render.OpenGit(root)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("render promote renders from the apps repository's history: %w", err)}
	}
	defer g.Close()
	head, err := g.Resolve("HEAD")
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("reading HEAD: %w", err)}
	}
	src := g.At(head)
	repo, ps, err := render.Load(ctx, src)
	if err != nil {
		return err
	}
	// Invalid specs stop here; warnings are printed once the webhook has
	// allowed the promotion, so that a refusal is not read under them.
	if ps.HasErrors() {
		return reportSpecs(ps, f.format, io)
	}
	plat := &repo.Platform
	to, from, err := f.environments(plat)
	if err != nil {
		return err
	}
	targets, err := promoteTargets(repo, to.Name, f.apps)
	if err != nil {
		return err
	}
	if err := f.target(root, repo); err != nil {
		return err
	}
	l, err := newLanding(&f.renderFlags, root, repo, io)
	if err != nil {
		return err
	}
	dirs := previousDirs(repo)
	for _, a := range targets {
		dirs = append(dirs, layout.AppDir(from.Cluster, a.Project, a.Spec.Name))
	}
	before, err := l.sink.(sink.Previewer).Previous(ctx, dirs)
	if err != nil {
		return err
	}

	// The releases, and the webhook's verdict on each.
	proms, refusals, err := f.releases(ctx, targets, from, before, io)
	if err != nil {
		return err
	}
	if len(refusals) > 0 {
		for _, r := range refusals {
			fmt.Fprintf(io.err, "render: not promoted: %s\n", r)
		}
		fmt.Fprintf(io.err, "render: nothing was promoted to %s\n", to.Name)
		return cli.Failed()
	}
	if err := reportSpecs(ps, f.format, io); err != nil {
		return err
	}

	// The render of HEAD (the environments a render writes; the others
	// kept), and that of the promoted apps at their releases.
	opts := render.Options{Source: src, Images: imageSource(&f.renderFlags, root, io), SpecRevisions: true, Previous: before.Read, PreviousDir: before.List}
	res, err := render.Render(ctx, repo, opts)
	if err != nil {
		return renderError(err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(io.err, "warning: %s\n", w)
	}
	folders := map[string]string{}
	releases := map[string]*generate.Release{}
	for _, p := range proms {
		folders[path.Dir(p.target.File)] = p.from.SpecRevision
		releases[p.target.Key()] = p.from
	}
	relRepo, err := render.LoadRelease(ctx, root, head, folders)
	if err != nil {
		return err
	}
	promoted, err := renderReleases(relRepo, releases, res.Images, from.Name, head, before)
	if err != nil {
		return err
	}
	fleet := mergePromoted(res.Fleet, promoted, releases, plat, to.Cluster)

	// Land it, with what the promotion moves in its commit and comment.
	return landPromotion(ctx, f, l, proms, from.Name, to.Name, res.Fleet, fleet, repo, relRepo, root, io)
}

// environments resolves --to and --from: the environment promoted to,
// which must have promote_from, and the one it is promoted from.
func (f *promoteFlags) environments(plat *spec.Platform) (to, from *spec.Environment, err error) {
	to = plat.EnvironmentByName(f.to)
	switch {
	case to == nil:
		return nil, nil, cli.Usagef("--to %s: platform.yaml declares no environment %s (%s)", f.to, f.to, strings.Join(plat.EnvironmentNames(), ", "))
	case to.PromoteFrom == "":
		return nil, nil, cli.Usagef("--to %s: %s has no promote_from; a render of the apps repository writes it", f.to, f.to)
	case f.from != "" && f.from != to.PromoteFrom:
		return nil, nil, cli.Usagef("--from %s: %s is promoted from %s", f.from, f.to, to.PromoteFrom)
	}
	return to, plat.EnvironmentByName(to.PromoteFrom), nil
}

// promoteTargets are the copies in env of the apps named (name or
// project/name), or of every app in env when none is named.
func promoteTargets(repo *load.Repo, env string, names []string) ([]*load.LoadedApp, error) {
	var in []*load.LoadedApp
	for _, a := range repo.Apps {
		if a.Environment == env {
			in = append(in, a)
		}
	}
	if len(names) == 0 {
		if len(in) == 0 {
			return nil, cli.Usagef("no app deploys to %s", env)
		}
		return in, nil
	}
	var out []*load.LoadedApp
	for _, n := range names {
		var found []*load.LoadedApp
		for _, a := range in {
			if n == a.Spec.Name || n == a.Ref() {
				found = append(found, a)
			}
		}
		switch len(found) {
		case 0:
			return nil, cli.Usagef("no app %s deploys to %s", n, env)
		case 1:
			if !slices.Contains(out, found[0]) {
				out = append(out, found[0])
			}
		default:
			return nil, cli.Usagef("%s names apps of several projects; name it as project/app", n)
		}
	}
	return out, nil
}

// renderReleases renders the promoted apps, of the apps repository at the
// promotion's commit with their folders at their releases, with the
// images of their releases. The copies it does not promote take the
// images of the render of HEAD (headImages): their files are HEAD's
// render's (mergePromoted), but an image render builds must be there for
// any copy to render.
func renderReleases(relRepo *load.Repo, releases map[string]*generate.Release, headImages map[string]string, from, head string, before sink.Before) (*generate.Fleet, error) {
	images := maps.Clone(headImages)
	if images == nil {
		images = map[string]string{}
	}
	for _, a := range relRepo.Apps {
		if rel, ok := releases[a.Key()]; ok {
			// A promoted copy runs its release's images, never HEAD's.
			for _, c := range a.Spec.Components {
				delete(images, load.NodeID(a, c.Name))
			}
			for c, img := range rel.Images {
				images[load.NodeID(a, c)] = img
			}
		}
	}
	return generate.Render(relRepo, generate.Options{
		Platform: &relRepo.Platform,
		SpecRevision: func(a *load.LoadedApp) string {
			if rel, ok := releases[a.Key()]; ok {
				return rel.SpecRevision
			}
			return ""
		},
		Images:      images,
		Previous:    before.Read,
		PreviousDir: before.List,
		Promote: func(a *load.LoadedApp) (generate.Promotion, bool) {
			_, ok := releases[a.Key()]
			return generate.Promotion{From: from, AppsCommit: head}, ok
		},
	})
}

// mergePromoted is the render of HEAD with the promoted apps' files, and
// the target cluster's project files, from the render of the releases;
// with fleet.artifacts, the target cluster's project artifacts (which
// pack those project files' apps' Flux files) come from the render of the
// releases too.
func mergePromoted(main, promoted *generate.Fleet, releases map[string]*generate.Release, plat *spec.Platform, cluster string) *generate.Fleet {
	project := func(x generate.File) bool {
		return x.App == "" && layout.ClusterOf(plat, x.Path) == cluster
	}
	out := &generate.Fleet{}
	for _, x := range main.Files {
		if _, ok := releases[x.App]; !ok && !project(x) {
			out.Files = append(out.Files, x)
		}
	}
	for _, x := range promoted.Files {
		if _, ok := releases[x.App]; ok || project(x) {
			out.Files = append(out.Files, x)
		}
	}
	slices.SortFunc(out.Files, func(a, b generate.File) int { return strings.Compare(a.Path, b.Path) })
	for _, a := range main.ProjectArtifacts {
		if layout.ClusterOf(plat, a.Title) != cluster {
			out.ProjectArtifacts = append(out.ProjectArtifacts, a)
		}
	}
	for _, a := range promoted.ProjectArtifacts {
		if layout.ClusterOf(plat, a.Title) == cluster {
			out.ProjectArtifacts = append(out.ProjectArtifacts, a)
		}
	}
	slices.SortFunc(out.ProjectArtifacts, func(a, b *artifact.Artifact) int { return strings.Compare(a.Title, b.Title) })
	return out
}

func keys(proms []promotion) []string {
	var out []string
	for _, p := range proms {
		out = append(out, p.target.Ref())
	}
	return out
}

// promotionText is the body of the fleet commit: each app's release, the
// webhook's verdict, and --force's reason.
func promotionText(proms []promotion, from string, f *promoteFlags) string {
	var b strings.Builder
	for _, p := range proms {
		fmt.Fprintf(&b, "%s: spec %s from %s", p.target.Ref(), short(p.from.SpecRevision), from)
		if p.verdict != nil {
			fmt.Fprintf(&b, " (deployment %d running, every check green)", p.verdict.ID)
		}
		b.WriteString("\n")
		for _, c := range slices.Sorted(maps.Keys(p.from.Images)) {
			fmt.Fprintf(&b, "  %s: %s\n", c, p.from.Images[c])
		}
	}
	if f.force {
		fmt.Fprintf(&b, "\nForced without the webhook's verdict: %s\n", f.reason)
	}
	for _, p := range proms {
		fmt.Fprintf(&b, "\nPromoted-Spec-Revision: %s %s", p.target.Ref(), p.from.SpecRevision)
	}
	b.WriteString("\n")
	return b.String()
}

// promotionSummary heads the promotion's comment: per app, the commits of
// its folder between the target's release and the new one, and the
// images that change.
func promotionSummary(ctx context.Context, root string, proms []promotion, from, to string, f *promoteFlags) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## fleetwright: promotion from %s to %s\n\n", md(from), md(to))
	if f.force {
		fmt.Fprintf(&b, "> ⚠️ Forced without the webhook's verdict: %s\n\n", md(f.reason))
	}
	var g *gitrepo.Repo
	top, rel, ok := gitrepo.FindTop(root)
	if ok {
		g, _ = gitrepo.Open(top)
	}
	if g != nil {
		defer g.Close()
	}
	for _, p := range proms {
		fmt.Fprintf(&b, "### %s\n\n", md(p.target.Ref()))
		was := ""
		if p.was != nil {
			was = p.was.SpecRevision
		}
		switch {
		case was == "":
			fmt.Fprintf(&b, "First release in %s: spec `%s`.\n\n", md(to), short(p.from.SpecRevision))
		case was == p.from.SpecRevision:
			fmt.Fprintf(&b, "Spec `%s`, as %s runs it already.\n\n", short(was), md(to))
		default:
			fmt.Fprintf(&b, "Spec `%s` → `%s`.\n\n", short(was), short(p.from.SpecRevision))
		}
		if g != nil {
			if cs, err := commitsBetween(ctx, g, path.Join(rel, path.Dir(p.target.File)), was, p.from.SpecRevision); err == nil && len(cs) > 0 {
				b.WriteString("Commits:\n\n")
				for _, c := range cs {
					fmt.Fprintf(&b, "- `%s` %s (%s)\n", short(c.Hash), md(c.Subject), md(c.Author.Name))
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("| component | " + md(to) + " now | promoted |\n|---|---|---|\n")
		for _, c := range slices.Sorted(maps.Keys(p.from.Images)) {
			old := "—"
			if p.was != nil && p.was.Images[c] != "" {
				old = "`" + md(p.was.Images[c]) + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | `%s` |\n", md(c), old, md(p.from.Images[c]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// maxPromotionCommits bounds the commits a comment lists per app.
const maxPromotionCommits = 50

// commitsBetween lists the commits of folder reachable from to and not
// from from (all of them when from is ""), newest first.
func commitsBetween(ctx context.Context, g *gitrepo.Repo, folder, from, to string) ([]gitrepo.Commit, error) {
	cs, err := g.History(ctx, to, maxPromotionCommits+1, folder)
	if err != nil {
		return nil, err
	}
	var out []gitrepo.Commit
	for _, c := range cs {
		if c.Hash == from {
			break
		}
		out = append(out, c)
	}
	return out[:min(len(out), maxPromotionCommits)], nil
}

// md escapes what comes from a spec or a person for Markdown.
func md(s string) string {
	r := strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;", "`", "'", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]", "\n", " ", "\r", " ")
	return r.Replace(s)
}

func pushOf(s sink.Sink) *sink.Push {
	switch s := s.(type) {
	case *sink.Push:
		return s
	case *sink.PullRequest:
		return s.Push
	}
	return nil
}

func prGitHub(s sink.Sink) github.PullRequester {
	if pr, ok := s.(*sink.PullRequest); ok {
		return pr.GitHub
	}
	return nil
}

func prRepo(s sink.Sink) github.Repo {
	if pr, ok := s.(*sink.PullRequest); ok {
		return pr.Repo
	}
	return github.Repo{}
}

// releases reads, for each app to promote, the release that runs in the
// source environment (and the one the target runs), and asks the webhook
// (when --webhook is given) whether it may leave: the promotions, and why
// the others are refused.
func (f *promoteFlags) releases(ctx context.Context, targets []*load.LoadedApp, from *spec.Environment, before sink.Before, io stdio) (proms []promotion, refusals []string, err error) {
	var client lifecycle.EnvironmentDeployments
	if f.webhook.url != "" {
		d, err := f.webhook.deployments()
		if err != nil {
			return nil, nil, err
		}
		c, ok := d.(lifecycle.EnvironmentDeployments)
		if !ok {
			return nil, nil, fmt.Errorf("the webhook client cannot list deployments by environment")
		}
		client = c
	}
	for _, a := range targets {
		p := promotion{target: a}
		rf := layout.ReleaseFile(from.Cluster, a.Project, a.Spec.Name)
		data, ok := before.Read(rf)
		if !ok {
			refusals = append(refusals, fmt.Sprintf("%s has no release in %s (%s): render it there first", a.Ref(), from.Name, rf))
			continue
		}
		if p.from, err = generate.ParseRelease(data); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", rf, err)
		}
		if data, ok := before.Read(layout.ReleaseFile(a.Cluster, a.Project, a.Spec.Name)); ok {
			p.was, _ = generate.ParseRelease(data)
		}
		if client != nil {
			dep, err := lifecycle.Verdict(ctx, client, a.App().AppRef, from.Name, p.from.SpecRevision)
			var refused *lifecycle.RefusedError
			switch {
			case errors.As(err, &refused) && f.force:
				fmt.Fprintf(io.err, "warning: %v; promoted anyway (--force: %s)\n", err, f.reason)
			case errors.As(err, &refused):
				refusals = append(refusals, err.Error())
				continue
			case err != nil:
				return nil, nil, err
			default:
				p.verdict = dep
			}
		}
		proms = append(proms, p)
	}
	return proms, refusals, nil
}

// landPromotion lands the promoted fleet through the sink, with what the
// promotion moves in its commit message and its comment.
func landPromotion(ctx context.Context, f *promoteFlags, l landing, proms []promotion, fromEnv, toEnv string, base, fleet *generate.Fleet, repo, relRepo *load.Repo, root string, io stdio) error {
	summary := promotionSummary(ctx, root, proms, fromEnv, toEnv, f)
	cmt := review.Build(review.Input{Base: base.Map(), Head: fleet.Map(), BaseRepo: repo, HeadRepo: relRepo,
		Limit: review.GitHubLimit - len(summary) - 100})
	subject := fmt.Sprintf("fleetwright: promote %s to %s", strings.Join(keys(proms), ", "), toEnv)
	message := subject + "\n\n" + promotionText(proms, fromEnv, f)
	if p := pushOf(l.sink); p != nil {
		p.Message = func([]string) string { return message }
	}
	// With fleet.artifacts, the artifacts the promotion pins go first.
	if err := pushArtifacts(ctx, &f.renderFlags, repo, fleet, cli.NewProgress(io.err, cli.IsTerminal(io.err)), io); err != nil {
		return err
	}
	out, err := l.sink.Land(ctx, fleet)
	if err != nil {
		return err
	}
	body := promoteMarker + "\n" + summary + "\n" + strings.TrimPrefix(cmt.Body, review.Marker+"\n")
	switch {
	case out.Empty():
		fmt.Fprintf(io.err, "%s already runs these releases; nothing to promote\n", toEnv)
		return nil
	case out.PullRequest != nil:
		if c, ok := prGitHub(l.sink).(github.Commenter); ok {
			if _, err := c.UpsertComment(ctx, prRepo(l.sink), out.PullRequest.Number, promoteMarker, body); err != nil {
				return fmt.Errorf("posting the promotion comment: %w", err)
			}
		}
		fmt.Fprintf(io.err, "promotion pull request #%d: %s\n", out.PullRequest.Number, out.PullRequest.URL)
		cli.SetOutputs(io.getenv, io.out, map[string]string{"pr-url": out.PullRequest.URL, "pr-number": fmt.Sprint(out.PullRequest.Number), "commit": out.Commit})
	case out.Commit != "":
		fmt.Fprintf(io.err, "pushed %s to %s: %s\n", short(out.Commit), l.branch, subject)
		fmt.Fprint(io.out, body)
	default:
		fmt.Fprintf(io.err, "promoted %s to %s in %s (%d file(s) written, %d deleted)\n", strings.Join(keys(proms), ", "), toEnv, l.where, out.Written, out.Deleted)
		fmt.Fprint(io.out, body)
	}
	return nil
}
