package gitrepo

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// FileChange is one file that a change writes or deletes, with its bytes
// on the base and after the change.
type FileChange struct {
	Path string
	// Old is the file on the base; Added when there is none.
	Old []byte
	// New is the file after the change; Deleted when there is none.
	New []byte

	Added, Deleted bool
}

// Comparison tells how a change differs from the head of a branch.
type Comparison struct {
	// Base is the commit compared with; "" for a branch of an empty
	// repository.
	Base string
	// Files are the files the change would write and delete, sorted by
	// path.
	Files []FileChange
	Stats Stats
}

// Compare fetches the remote and compares ch with the head of branch there,
// as Land would apply it, without committing, pushing, storing an object
// or touching the work tree.
func (r *Repo) Compare(ctx context.Context, branch string, ch Change) (Comparison, error) {
	if err := (Target{Base: branch}).validate(); err != nil {
		return Comparison{}, err
	}
	if err := r.Fetch(ctx); err != nil {
		return Comparison{}, err
	}
	base, err := r.remoteHead(branch)
	if err != nil {
		return Comparison{}, err
	}
	if base.IsZero() && !r.remoteIsEmpty() {
		return Comparison{}, fmt.Errorf("%w: %s", ErrBranchNotFound, branch)
	}
	p, root, err := r.compare(ctx, base, ch)
	if err != nil {
		return Comparison{}, err
	}
	cmp := Comparison{Base: hashString(base), Stats: p.stats}
	var tree *object.Tree
	if !root.IsZero() {
		if tree, err = r.repo.TreeObject(root); err != nil {
			return Comparison{}, fmt.Errorf("reading tree %s: %w", root, err)
		}
	}
	for _, path := range p.paths() {
		_, desired := p.hashes[path]
		fc := FileChange{Path: path, New: ch.Files[path], Deleted: !desired}
		if fc.Old, fc.Added, err = r.fileAt(tree, path); err != nil {
			return Comparison{}, err
		}
		cmp.Files = append(cmp.Files, fc)
	}
	return cmp, nil
}

// fileAt reads the file at path in tree; missing is set when there is
// none (no entry, or a folder).
func (r *Repo) fileAt(tree *object.Tree, path string) (b []byte, missing bool, err error) {
	if tree == nil {
		return nil, true, nil
	}
	e, err := tree.FindEntry(path)
	if err != nil || !e.Mode.IsFile() {
		return nil, true, nil
	}
	if b, err = r.readBlob(e.Hash); err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, false, nil
}
