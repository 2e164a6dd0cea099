package render

import (
	"context"
	"log/slog"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// ReviewOptions configure Review.
type ReviewOptions struct {
	// Base and Head are the pull request's two revisions.
	Base, Head Source
	// FullDiffHint tells readers of the comment where the whole diff is.
	FullDiffHint string
	// Charts renders the charts of the HelmReleases that change (nil:
	// the comment shows HelmReleases as the fleet has them).
	Charts   review.Charts
	Logger   *slog.Logger
	Progress Progress
	// PR is the pull request's number: with platform.yaml previews, the
	// comment gets its Preview section (review.PreviewSection), saying
	// the preview is deploying, or which apps are skipped.
	PR int
}

// ReviewResult is what a pull request changes in the fleet.
type ReviewResult struct {
	// Body is the comment: the review, or the head's problems when its
	// specs are invalid.
	Body string
	// Comment is the review; nil when the head's specs are invalid.
	Comment *review.Comment
	// HeadProblems are the problems of the head's specs, sorted.
	HeadProblems load.Problems
}

// Review renders both revisions, each image that render builds named by
// its content tag (nothing is built, no registry is asked), and compares
// them. A base whose specs are invalid shows everything as new.
func Review(ctx context.Context, opts ReviewOptions) (*ReviewResult, error) {
	loader, err := NewLoader(opts.Head.Root())
	if err != nil {
		return nil, err
	}
	// The head renders over the base's fleet, as render does over the
	// fleet as it is (generate.Options.Previous): where the apps' Flux
	// objects go depends on it.
	side := func(src Source, prev map[string][]byte) (*load.Repo, load.Problems, map[string][]byte, error) {
		repo, ps, err := src.Load(ctx, loader)
		if err != nil || ps.HasErrors() {
			return repo, ps, nil, err
		}
		ro := Options{Source: src, Images: ContentTags{}, Logger: opts.Logger, Progress: opts.Progress}
		if prev != nil {
			ro.Previous = func(p string) ([]byte, bool) { b, ok := prev[p]; return b, ok }
			ro.PreviousDir = generate.FilesIn(prev)
		}
		res, err := Render(ctx, repo, ro)
		if err != nil {
			return nil, nil, nil, err
		}
		return repo, ps, res.Fleet.Map(), nil
	}
	baseRepo, _, base, err := side(opts.Base, nil)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = map[string][]byte{}
	}
	headRepo, headProblems, head, err := side(opts.Head, base)
	if err != nil {
		return nil, err
	}
	if head == nil {
		return &ReviewResult{Body: review.Invalid(headProblems), HeadProblems: headProblems}, nil
	}
	in := review.Input{
		Base: base, Head: head, BaseRepo: baseRepo, HeadRepo: headRepo, FullDiffHint: opts.FullDiffHint,
		BaseCommit: commitOf(opts.Base), HeadCommit: commitOf(opts.Head), Charts: opts.Charts,
	}
	if headRepo.Platform.Previews != nil && opts.PR > 0 {
		// Without the history it needs (a shallow clone), the comment
		// goes without its Preview section: render preview writes it.
		if in.Preview, err = reviewPreview(ctx, loader, opts, headRepo); err != nil {
			log := opts.Logger
			if log == nil {
				log = slog.New(slog.DiscardHandler)
			}
			log.Warn("the review comment goes without its Preview section", "error", err)
			in.Preview = nil
		}
	}
	c := review.BuildContext(ctx, in)
	return &ReviewResult{Body: c.Body, Comment: c, HeadProblems: headProblems}, nil
}

// commitOf is the commit a Git revision names ("" for a folder).
func commitOf(src Source) string {
	if g, ok := src.(*gitSource); ok {
		if h, err := g.r.g.Resolve(g.ref); err == nil {
			return h
		}
	}
	return ""
}

// reviewPreview is the preview the pull request gets, as render preview
// will render it: the apps whose folders it changes, from the merge base
// of its two revisions (read from Git; nil for folders), and those they
// reference.
func reviewPreview(ctx context.Context, loader *load.Loader, opts ReviewOptions, headRepo *load.Repo) (*review.Preview, error) {
	b, okB := opts.Base.(*gitSource)
	h, okH := opts.Head.(*gitSource)
	if !okB || !okH || b.r != h.r {
		return nil, nil
	}
	changed, err := h.r.ChangedApps(ctx, b.ref, h.ref, headRepo)
	if err != nil {
		return nil, err
	}
	p, ps := loader.PreviewOf(headRepo, opts.PR, changed)
	if ps.HasErrors() {
		return nil, nil
	}
	out := ReviewPreview(p, PreviewURLs(p))
	out.State = review.PreviewDeploying
	return &out, nil
}

// ReviewPreview is the preview p, with its apps' addresses, as the
// review comment's Preview section tells it.
func ReviewPreview(p *load.Preview, urls map[string][]string) review.Preview {
	out := review.Preview{PR: p.PR}
	for _, a := range p.Apps {
		out.Apps = append(out.Apps, review.PreviewApp{Name: a, URLs: urls[a]})
	}
	for _, s := range p.Skipped {
		out.Skipped = append(out.Skipped, review.PreviewSkip{App: s.App, Reason: s.Reason})
	}
	return out
}
