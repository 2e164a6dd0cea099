package render

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
)

// NewLoader is the spec loader render uses: the exports catalog, and
// problems naming files below root. It compiles the schemas: reuse it.
func NewLoader(root string) (*load.Loader, error) {
	return validate.NewLoader(exports.Catalog{}, root)
}

// Load reads src and validates it: the repository is usable only when the
// problems hold no error.
func Load(ctx context.Context, src Source) (*load.Repo, load.Problems, error) {
	loader, err := NewLoader(src.Root())
	if err != nil {
		return nil, nil, err
	}
	repo, ps, err := src.Load(ctx, loader)
	if err != nil || ps.HasErrors() {
		return repo, ps, err
	}
	if more := CheckPatches(repo); len(more) > 0 {
		ps = append(ps, more...).Sort()
	}
	return repo, ps, nil
}

// Options configure Render and Run.
type Options struct {
	// Source is the apps repository; Run loads it, and image sources read
	// build inputs from it.
	Source Source
	// Images resolves the workloads' images; nil keeps them as written.
	Images ImageSource
	// SpecRevisions writes each app's spec commit on its Flux objects, as
	// the Source knows them.
	SpecRevisions bool
	// Reuse is generate.Options.Reuse: an app whose files are in place is
	// not generated again.
	Reuse func(app string, d generate.Digest) bool
	// Previous is generate.Options.Previous: the fleet as it is.
	Previous func(path string) ([]byte, bool)
	// PreviousDir is generate.Options.PreviousDir.
	PreviousDir func(dir string) []string
	// Logger receives what the pipeline does (default: discard).
	Logger *slog.Logger
	// Progress hears about long work (default: nothing).
	Progress Progress
	// Now is the clock for Summary.Took (default time.Now).
	Now func() time.Time
}

// Result is what a render produced.
type Result struct {
	Repo *load.Repo
	// Problems of the specs, sorted; with an error among them nothing was
	// generated.
	Problems load.Problems
	// Fleet is the generated fleet; nil when the specs are invalid.
	Fleet *generate.Fleet
	// Warnings are for the user, one line each, without "warning: ".
	Warnings []string
	Summary  Summary
	// Images are the images rendered, by workload node (spec.NodeID),
	// where they differ from the spec (built or pinned).
	Images map[string]string
}

// Summary counts what a render did.
type Summary struct {
	Apps   int // apps in the repository: one per app.yaml
	Copies int // the apps' copies: one per environment an app deploys to
	Images int // workload images that differ from the spec's
	Reused int // apps whose files were in place, not generated again
	Files  int // files generated
	Took   time.Duration
}

// Run loads and validates the specs of opts.Source and, when they are
// valid, renders them.
func Run(ctx context.Context, opts Options) (*Result, error) {
	start := clock(opts.Now)()
	repo, ps, err := Load(ctx, opts.Source)
	if err != nil {
		return nil, err
	}
	if ps.HasErrors() {
		return &Result{Repo: repo, Problems: ps, Summary: summarize(repo.Apps)}, nil
	}
	res, err := Render(ctx, repo, opts)
	if err != nil {
		return nil, err
	}
	res.Problems = ps
	res.Summary.Took = clock(opts.Now)().Sub(start)
	return res, nil
}

// Render resolves the images of the valid repository repo (loaded from
// opts.Source) and generates its fleet. Nothing is written anywhere.
func Render(ctx context.Context, repo *load.Repo, opts Options) (*Result, error) {
	start := clock(opts.Now)()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := progressOr(opts.Progress)
	res := &Result{Repo: repo, Summary: summarize(repo.Apps)}
	var images Images
	if opts.Images != nil {
		p.Stage("resolving images")
		var err error
		images, err = opts.Images.Images(ctx, ImageInput{Repo: repo, Source: opts.Source, Progress: p, Logger: log})
		if err != nil {
			return nil, err
		}
		res.Warnings = images.Warnings
		log.Debug("images resolved", "images", len(images.ByNode))
	}
	gen := generate.Options{Platform: &repo.Platform, Images: images.ByNode, Reuse: opts.Reuse, Previous: opts.Previous, PreviousDir: opts.PreviousDir}
	if opts.SpecRevisions {
		p.Stage("reading the spec history")
		revs, err := opts.Source.Revisions(ctx, repo)
		if err != nil {
			return nil, fmt.Errorf("reading the spec history: %w", err)
		}
		gen.SpecRevision = revs
	}
	p.Stage(fmt.Sprintf("generating %d app(s)", len(repo.Apps)))
	f, err := generate.Render(repo, gen)
	if err != nil {
		return nil, err
	}
	res.Fleet = f
	if n := len(f.Preparing); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the Flux objects of %d app(s) stay where they are this time, kept from pruning while they move; "+
			"once Flux has applied this fleet commit, render again to move them to their project's source or namespace (see docs/fleet.md)", n))
	}
	for _, p := range f.Emptied {
		res.Warnings = append(res.Warnings, fmt.Sprintf("project %s has no app left: its namespace stays this time, with the account its apps' Flux objects are deleted as; "+
			"once Flux has applied this fleet commit, the next render removes it (see docs/fleet.md)", p))
	}
	res.Summary.Images = len(images.ByNode)
	res.Images = images.ByNode
	res.Summary.Reused = len(f.Reused)
	res.Summary.Files = len(f.Files)
	res.Summary.Took = clock(opts.Now)().Sub(start)
	log.Debug("generated", "apps", len(repo.Apps), "reused", len(f.Reused), "files", len(f.Files))
	return res, nil
}

func clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// summarize counts a repository's apps as their authors see them, one per
// app.yaml, and their copies, one per environment each deploys to.
func summarize(apps []*load.LoadedApp) Summary {
	files := map[string]bool{}
	for _, a := range apps {
		files[a.File] = true
	}
	return Summary{Apps: len(files), Copies: len(apps)}
}
