package sink

import (
	"context"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/generate"
)

// Dir lands the fleet in a folder: only files whose bytes differ are
// written, generated files no longer generated are removed from the managed
// folders, and files render did not generate are left alone.
type Dir struct {
	// Root is the fleet folder.
	Root string
	// Managed are the folders, relative to Root, whose generated files the
	// fleet owns (layout.ManagedDirs).
	Managed []string
	// DryRun compares only: nothing is written.
	DryRun bool

	index *fleet.Index // set by Indexed; nil reads every file
}

var _ Sink = (*Dir)(nil)

// Land compares f with the folder and, unless DryRun, carries out the
// changes. The result is filled even when writing fails.
func (d *Dir) Land(_ context.Context, f *generate.Fleet) (Result, error) {
	// A change an earlier run left half done is finished first.
	if err := fleet.Recover(d.Root); err != nil {
		return Result{}, err
	}
	plan, err := d.index.Compute(d.Root, f.Map(), d.Managed)
	if err != nil {
		return Result{}, err
	}
	res := Result{Changes: plan.Changes, Unchanged: plan.Unchanged, Unmanaged: plan.Unmanaged}
	res.Paths = make([]string, len(plan.Changes))
	for i, c := range plan.Changes {
		res.Paths[i] = c.Path
		if c.Op == fleet.Delete {
			res.Deleted++
		} else {
			res.Written++
		}
	}
	if d.DryRun {
		return res, nil
	}
	return res, d.index.Apply(d.Root, plan)
}

// Indexed is a Dir with the fleet index (see fleet.Index) as a cache: files
// whose stat data it vouches for are not read, and apps whose files are in
// place as generated from the same inputs are not generated again (Reuse).
// The index is saved after every Land.
type Indexed struct {
	dir   *Dir
	file  string
	index *fleet.Index

	recoverErr error // from finishing an interrupted change
}

var _ Reuser = (*Indexed)(nil)

// NewIndexed wraps d with the index kept in file, loading it now: a
// missing or corrupt index starts empty. A change an earlier run left half
// done in the folder is finished first (fleet.Recover), so that Reuse looks
// at the fleet as it was completed; Land reports a failure to.
func NewIndexed(d *Dir, file string) *Indexed {
	err := fleet.Recover(d.Root)
	return &Indexed{dir: d, file: file, index: fleet.LoadIndex(file), recoverErr: err}
}

// Reuse reports whether the files of app, last generated from digest dg,
// are all in the folder as they were written.
func (x *Indexed) Reuse(app string, dg generate.Digest) bool {
	if x.recoverErr != nil {
		return false
	}
	return x.index.InPlace(x.dir.Root, app, dg)
}

// Land is the Dir's Land with the index; it then records the apps of f and
// saves the index, reporting a failure to save in Result.CacheErr.
func (x *Indexed) Land(ctx context.Context, f *generate.Fleet) (Result, error) {
	if x.recoverErr != nil {
		return Result{}, x.recoverErr
	}
	d := *x.dir
	d.index = x.index
	res, err := d.Land(ctx, f)
	x.index.RememberApps(f.AppFiles())
	res.CacheErr = x.index.Save(x.file)
	return res, err
}
