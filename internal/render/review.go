package render

import (
	"context"
	"log/slog"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec"
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
}

// ReviewResult is what a pull request changes in the fleet.
type ReviewResult struct {
	// Body is the comment: the review, or the head's problems when its
	// specs are invalid.
	Body string
	// Comment is the review; nil when the head's specs are invalid.
	Comment *review.Comment
	// HeadProblems are the problems of the head's specs, sorted.
	HeadProblems spec.Problems
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
	side := func(src Source, prev map[string][]byte) (*spec.Repo, spec.Problems, map[string][]byte, error) {
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
	c := review.BuildContext(ctx, review.Input{
		Base: base, Head: head, BaseRepo: baseRepo, HeadRepo: headRepo, FullDiffHint: opts.FullDiffHint,
		BaseCommit: commitOf(opts.Base), HeadCommit: commitOf(opts.Head), Charts: opts.Charts,
	})
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
