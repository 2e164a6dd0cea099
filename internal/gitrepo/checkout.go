package gitrepo

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// fastMove moves a clean work tree from HEAD's commit to target, rewriting
// only the files that differ between the two commits and updating the
// index in one write. It first proves the work tree clean — the index
// holds exactly HEAD's tree and every indexed file has the size and
// modification time the index recorded — and reports false, having
// changed nothing, when it cannot; the caller then does a full reset.
func (r *Repo) fastMove(target plumbing.Hash) (bool, error) {
	head, err := r.repo.Head()
	if err != nil {
		return false, nil
	}
	cur, err := r.repo.CommitObject(head.Hash())
	if err != nil {
		return false, nil
	}
	tgt, err := r.repo.CommitObject(target)
	if err != nil {
		return false, fmt.Errorf("reading commit %s: %w", target, err)
	}
	idx, err := r.repo.Storer.Index()
	if err != nil {
		return false, nil
	}
	entries := make(map[string]*index.Entry, len(idx.Entries))
	mem := newMemDir()
	for _, e := range idx.Entries {
		if e.Stage != 0 || e.SkipWorktree || e.IntentToAdd || !checkoutMode(e.Mode) {
			return false, nil
		}
		if err := mem.addEntry(e.Name, object.TreeEntry{Mode: e.Mode, Hash: e.Hash}, e.Name); err != nil {
			return false, nil
		}
		fi, err := os.Lstat(filepath.Join(r.dir, filepath.FromSlash(e.Name)))
		if err != nil || fi.Size() != int64(e.Size) || !fi.ModTime().Equal(e.ModifiedAt) {
			return false, nil
		}
		entries[e.Name] = e
	}
	if err := mem.seal(); err != nil || mem.hash != cur.TreeHash {
		return false, nil
	}

	var writes []object.TreeEntry // Name holds the full path
	var deletes []string
	if err := r.diffTrees(cur.TreeHash, tgt.TreeHash, "", &writes, &deletes); err != nil {
		return false, err
	}
	for _, w := range writes {
		if !checkoutMode(w.Mode) {
			return false, nil
		}
	}
	for _, name := range deletes {
		full := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("deleting %s: %w", name, err)
		}
		removeEmptyParents(r.dir, filepath.Dir(full))
		delete(entries, name)
	}
	for _, w := range writes {
		full := filepath.Join(r.dir, filepath.FromSlash(w.Name))
		b, err := r.readBlob(w.Hash)
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", w.Name, err)
		}
		if err := writeEntry(full, w.Mode, b); err != nil {
			return false, err
		}
		fi, err := os.Lstat(full)
		if err != nil {
			return false, fmt.Errorf("stat %s: %w", w.Name, err)
		}
		entries[w.Name] = &index.Entry{
			Name: w.Name, Hash: w.Hash, Mode: w.Mode,
			Size: uint32(fi.Size()), ModifiedAt: fi.ModTime(),
		}
	}
	idx.Entries = slices.Collect(maps.Values(entries))
	idx.Cache, idx.ResolveUndo = nil, nil
	if err := r.repo.Storer.SetIndex(idx); err != nil {
		return false, fmt.Errorf("writing index: %w", err)
	}
	return true, nil
}

func checkoutMode(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Symlink
}

// writeEntry writes a file of the given mode: a symbolic link holds its
// target as content.
func writeEntry(full string, mode filemode.FileMode, b []byte) error {
	if mode != filemode.Symlink {
		if err := writeFileAtomic(full, b); err != nil {
			return err
		}
		if mode == filemode.Executable {
			return os.Chmod(full, 0o755)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(full), err)
	}
	if err := os.RemoveAll(full); err != nil {
		return fmt.Errorf("replacing %s: %w", full, err)
	}
	if err := os.Symlink(string(b), full); err != nil {
		return fmt.Errorf("linking %s: %w", full, err)
	}
	return nil
}

// diffTrees lists the files to write and delete to turn tree a into tree
// b, descending only into subtrees whose hashes differ.
func (r *Repo) diffTrees(a, b plumbing.Hash, dir string, writes *[]object.TreeEntry, deletes *[]string) error {
	if a == b {
		return nil
	}
	ta, tb := treeEntries{}, treeEntries{}
	var err error
	if !a.IsZero() {
		if ta, err = r.readTreeEntries(a); err != nil {
			return fmt.Errorf("reading tree %s: %w", a, err)
		}
	}
	if !b.IsZero() {
		if tb, err = r.readTreeEntries(b); err != nil {
			return fmt.Errorf("reading tree %s: %w", b, err)
		}
	}
	names := slices.Sorted(maps.Keys(ta))
	for n := range tb {
		if _, ok := ta[n]; !ok {
			names = append(names, n)
		}
	}
	for _, name := range names {
		ea, eb := ta[name], tb[name]
		if ea == eb {
			continue
		}
		p := name
		if dir != "" {
			p = dir + "/" + name
		}
		switch {
		case ea.Mode == filemode.Dir && eb.Mode == filemode.Dir:
			if err := r.diffTrees(ea.Hash, eb.Hash, p, writes, deletes); err != nil {
				return err
			}
			continue
		case ea.Mode == filemode.Dir:
			if err := r.diffTrees(ea.Hash, plumbing.ZeroHash, p, writes, deletes); err != nil {
				return err
			}
		case !ea.Hash.IsZero():
			*deletes = append(*deletes, p)
		}
		switch {
		case eb.Mode == filemode.Dir:
			if err := r.diffTrees(plumbing.ZeroHash, eb.Hash, p, writes, deletes); err != nil {
				return err
			}
		case !eb.Hash.IsZero():
			*writes = append(*writes, object.TreeEntry{Name: p, Mode: eb.Mode, Hash: eb.Hash})
		}
	}
	return nil
}
