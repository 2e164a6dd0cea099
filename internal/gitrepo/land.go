package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// DefaultMaxAttempts bounds how often Land retries after losing a race.
const DefaultMaxAttempts = 5

// Target says where Land puts a change.
type Target struct {
	// Base is the branch the change is applied on.
	Base string
	// Branch is the branch that is pushed. Empty, or equal to Base, pushes
	// Base directly (a fast-forward). Any other branch is rebuilt on every
	// run as Base plus one commit and force-pushed with a lease on the value
	// that was fetched: the head branch of a pull request, owned by the
	// tool.
	Branch string
	// MaxAttempts bounds the attempts when other writers push first;
	// zero means DefaultMaxAttempts.
	MaxAttempts int
}

func (t Target) direct() bool { return t.Branch == "" || t.Branch == t.Base }

func (t Target) branch() string {
	if t.direct() {
		return t.Base
	}
	return t.Branch
}

func (t Target) validate() error {
	if t.Base == "" {
		return errors.New("invalid target: no base branch")
	}
	for _, b := range []string{t.Base, t.Branch} {
		if b == "" {
			continue
		}
		if err := plumbing.NewBranchReferenceName(b).Validate(); err != nil {
			return fmt.Errorf("invalid target: branch %q: %w", b, err)
		}
	}
	return nil
}

// Result tells what Land did.
type Result struct {
	// Commit is the head of the pushed branch afterwards; the base commit
	// when the change was already in the base.
	Commit string
	// Base is the base commit the change was applied on.
	Base string
	// Changed reports whether the change differs from the base.
	Changed bool
	// Pushed reports whether anything was pushed; false when a rerun found
	// the change already in place.
	Pushed bool
	// Attempts counts the attempts made (more than one after lost races).
	Attempts int
	// Stats counts the files written, deleted and left as they were.
	Stats Stats
	// Paths are the files the change writes and deletes on the base,
	// sorted.
	Paths []string
}

// Land fetches the remote, applies ch on the head of the base branch,
// commits and pushes to the target, and returns what it did. A direct push
// that another writer beats is retried on the new head: fetch, apply the
// same files again, commit and push, up to MaxAttempts. A change that is
// already in place commits and pushes nothing, so reruns are idempotent.
// On return the work tree holds the pushed commit.
func (r *Repo) Land(ctx context.Context, t Target, ch Change) (Result, error) {
	if err := t.validate(); err != nil {
		return Result{}, err
	}
	if err := ch.validate(); err != nil {
		return Result{}, err
	}
	maxAttempts := t.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	branch := t.branch()
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		res, retry, err := r.landOnce(ctx, t, ch, attempt)
		res.Attempts = attempt
		if err != nil || !retry {
			return res, err
		}
		r.log.Info("push lost a race with another writer; retrying", "branch", branch, "attempt", attempt)
	}
	return Result{Attempts: maxAttempts}, fmt.Errorf("landing on %s: %w (%d attempts)", branch, ErrTooManyAttempts, maxAttempts)
}

// landOnce makes one attempt; retry is set when the push lost a race.
func (r *Repo) landOnce(ctx context.Context, t Target, ch Change, attempt int) (res Result, retry bool, err error) {
	branch := t.branch()
	if err := r.Fetch(ctx); err != nil {
		return res, false, err
	}
	base, err := r.remoteHead(t.Base)
	if err != nil {
		return res, false, err
	}
	if base.IsZero() && !r.remoteIsEmpty() {
		return res, false, fmt.Errorf("%w: %s", ErrBranchNotFound, t.Base)
	}
	old := base
	if !t.direct() {
		if old, err = r.remoteHead(t.Branch); err != nil {
			return res, false, err
		}
	}
	if err := r.checkoutBase(branch, base); err != nil {
		return res, false, err
	}
	p, err := r.plan(ctx, base, ch)
	if err != nil {
		return res, false, err
	}
	res.Base, res.Stats, res.Paths = hashString(base), p.stats, p.paths()
	if len(p.writes)+len(p.deletes) == 0 {
		res.Commit = res.Base
		r.log.Info("no change", "base", res.Base)
		return res, false, nil
	}
	res.Changed = true

	if !t.direct() && !old.IsZero() && r.holds(old, base, p.tree) {
		// The branch already holds this change on this base.
		if err := r.updateWorkTree(ctx, p, ch.Files); err != nil {
			return res, false, err
		}
		if err := r.setBranch(old); err != nil {
			return res, false, err
		}
		res.Commit = old.String()
		r.log.Info("branch already up to date", "branch", branch, "commit", res.Commit)
		return res, false, nil
	}

	h, err := r.commitPlan(ctx, p, ch)
	if err != nil {
		return res, false, err
	}
	res.Commit = h.String()
	if r.beforePush != nil {
		r.beforePush(attempt)
	}
	perr := r.push(ctx, branch, old, !t.direct())
	if perr == nil {
		res.Pushed = true
		r.log.Info("pushed", "branch", branch, "commit", res.Commit)
		return res, false, nil
	}
	// Find out whether another writer moved the branch since the fetch.
	if err := r.Fetch(ctx); err != nil {
		return res, false, errors.Join(fmt.Errorf("pushing %s: %w", branch, perr), err)
	}
	now, err := r.remoteHead(branch)
	if err != nil {
		return res, false, err
	}
	switch now {
	case h:
		res.Pushed = true // the push landed although it reported an error
		return res, false, nil
	case old:
		return res, false, fmt.Errorf("pushing %s: %w", branch, perr)
	default:
		return res, true, nil
	}
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// holds reports whether commit c is exactly base plus a commit whose tree
// is tree.
func (r *Repo) holds(c, base plumbing.Hash, tree plumbing.Hash) bool {
	obj, err := r.repo.CommitObject(c)
	if err != nil || obj.TreeHash != tree {
		return false
	}
	if base.IsZero() {
		return len(obj.ParentHashes) == 0
	}
	return len(obj.ParentHashes) == 1 && obj.ParentHashes[0] == base
}

// checkoutBase checks out branch at base; a zero base leaves branch unborn
// with an empty index and work tree.
func (r *Repo) checkoutBase(branch string, base plumbing.Hash) error {
	if !base.IsZero() {
		return r.checkout(branch, base)
	}
	name := plumbing.NewBranchReferenceName(branch)
	if err := r.repo.Storer.RemoveReference(name); err != nil {
		return fmt.Errorf("removing %s: %w", branch, err)
	}
	if err := r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, name)); err != nil {
		return fmt.Errorf("pointing HEAD at %s: %w", branch, err)
	}
	if r.bare {
		return nil
	}
	idx, err := r.repo.Storer.Index()
	if err != nil {
		return fmt.Errorf("reading index: %w", err)
	}
	for _, e := range idx.Entries {
		full := filepath.Join(r.dir, filepath.FromSlash(e.Name))
		if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("deleting %s: %w", e.Name, err)
		}
		removeEmptyParents(r.dir, filepath.Dir(full))
	}
	idx.Entries, idx.Cache, idx.ResolveUndo = nil, nil, nil
	if err := r.repo.Storer.SetIndex(idx); err != nil {
		return fmt.Errorf("writing index: %w", err)
	}
	return nil
}

// push pushes the local branch to the remote branch of the same name. A
// plain push must fast-forward; a forced one must find the remote branch
// at old (a lease), or absent when old is zero.
func (r *Repo) push(ctx context.Context, branch string, old plumbing.Hash, force bool) error {
	ref := plumbing.NewBranchReferenceName(branch)
	spec := config.RefSpec(ref.String() + ":" + ref.String())
	opts := &git.PushOptions{RemoteName: RemoteName, Auth: r.auth}
	if force && !old.IsZero() {
		spec = "+" + spec
		opts.ForceWithLease = &git.ForceWithLease{RefName: ref, Hash: old}
	}
	opts.RefSpecs = []config.RefSpec{spec}
	err := r.repo.PushContext(ctx, opts)
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}
