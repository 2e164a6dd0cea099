package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetwright/fleetwright/internal/atomicfile"
)

// Change is a desired state for part of a repository: the files under
// Prefixes become exactly Files.
type Change struct {
	// Prefixes are the directories (or files) the change owns: files under
	// them that are not in Files are deleted. Files outside them are left
	// alone. "" or "." owns the whole tree.
	Prefixes []string
	// Files maps slash-separated paths, each under one of Prefixes, to their
	// content. They are written as regular, non-executable files.
	Files map[string][]byte
	// Keep, when set, is asked about each file under Prefixes that is not
	// in Files, with its content: the file stays when it says so, instead
	// of being deleted.
	Keep func(path string, content []byte) bool
	// Message is the commit message.
	Message string
	// Describe, when set, makes the commit message from the sorted paths
	// the change writes and deletes, in place of Message.
	Describe func(paths []string) string
	// Author of the commit; a zero When is the clock's now.
	Author Signature
	// Committer of the commit; zero means Author.
	Committer Signature
}

// Stats counts what a change did to the files under its prefixes.
type Stats struct {
	Written   int // added or changed
	Deleted   int
	Unchanged int
}

func (ch Change) validate() error {
	var errs []error
	if len(ch.Prefixes) == 0 {
		errs = append(errs, errors.New("no prefixes"))
	}
	if strings.TrimSpace(ch.Message) == "" && ch.Describe == nil {
		errs = append(errs, errors.New("empty commit message"))
	}
	if ch.Author.Name == "" || ch.Author.Email == "" {
		errs = append(errs, errors.New("author name and email are required"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid change: %w", err)
	}
	return nil
}

// plan is what applying a change to a base tree does.
type plan struct {
	base    plumbing.Hash            // base commit, zero for none
	tree    plumbing.Hash            // the new root tree
	writes  []string                 // paths written, sorted
	deletes []string                 // paths deleted, sorted
	hashes  map[string]plumbing.Hash // blob hash of every desired file
	stats   Stats
}

// paths returns the paths the plan writes and deletes, sorted.
func (p *plan) paths() []string {
	return slices.Sorted(slices.Values(slices.Concat(p.writes, p.deletes)))
}

// Commit applies ch on top of HEAD: it writes the changed files into the
// work tree, deletes the files that are gone, leaves identical ones
// untouched, stages them and commits on the current branch (in a bare
// repository it only commits). It returns
// ErrNoChange, and commits nothing, when HEAD already holds the files.
func (r *Repo) Commit(ctx context.Context, ch Change) (string, Stats, error) {
	base := plumbing.ZeroHash
	head, err := r.repo.Head()
	switch {
	case err == nil:
		base = head.Hash()
	case !errors.Is(err, plumbing.ErrReferenceNotFound):
		return "", Stats{}, fmt.Errorf("reading HEAD: %w", err)
	}
	p, err := r.plan(ctx, base, ch)
	if err != nil {
		return "", Stats{}, err
	}
	if len(p.writes)+len(p.deletes) == 0 {
		return "", p.stats, ErrNoChange
	}
	h, err := r.commitPlan(ctx, p, ch)
	if err != nil {
		return "", p.stats, err
	}
	return h.String(), p.stats, nil
}

// plan computes the tree that results from applying ch to the commit base
// and stores its new blobs and trees. It reads no file of the work tree.
func (r *Repo) plan(ctx context.Context, base plumbing.Hash, ch Change) (*plan, error) {
	pl, root, err := r.compare(ctx, base, ch)
	if err != nil {
		return nil, err
	}
	ed := &treeEditor{r: r, root: &editNode{hash: root}}
	for _, p := range pl.writes {
		h := pl.hashes[p]
		if err := r.storeBlob(h, ch.Files[p]); err != nil {
			return nil, fmt.Errorf("storing %s: %w", p, err)
		}
		if err := ed.set(p, object.TreeEntry{Mode: filemode.Regular, Hash: h}); err != nil {
			return nil, err
		}
	}
	for _, p := range pl.deletes {
		if err := ed.remove(p); err != nil {
			return nil, err
		}
	}
	if len(pl.writes)+len(pl.deletes) == 0 {
		pl.tree = root
		return pl, nil
	}
	if pl.tree, err = ed.write(); err != nil {
		return nil, err
	}
	return pl, nil
}

// compare finds the files that applying ch to the commit base writes and
// deletes, and returns them in a plan without its tree, with the base's
// root tree. It stores nothing.
func (r *Repo) compare(ctx context.Context, base plumbing.Hash, ch Change) (*plan, plumbing.Hash, error) {
	if err := ch.validate(); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	prefixes, err := cleanPrefixes(ch.Prefixes)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	desired := make(map[string]plumbing.Hash, len(ch.Files))
	for _, p := range slices.Sorted(maps.Keys(ch.Files)) {
		content := ch.Files[p]
		c, err := cleanPath(p)
		if err != nil || c != p {
			return nil, plumbing.ZeroHash, fmt.Errorf("file %q: %w", p, cmpErr(err, "path is not clean"))
		}
		if !underAny(p, prefixes) {
			return nil, plumbing.ZeroHash, fmt.Errorf("file %q is outside the prefixes %q", p, ch.Prefixes)
		}
		desired[p] = plumbing.ComputeHash(plumbing.BlobObject, content)
	}

	pl := &plan{base: base, hashes: desired}
	root := plumbing.ZeroHash
	if !base.IsZero() {
		c, err := r.repo.CommitObject(base)
		if err != nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("reading base commit %s: %w", base, err)
		}
		root = c.TreeHash
	}
	d := &differ{r: r, ctx: ctx, pl: pl, keep: ch.Keep}
	for _, pre := range outermost(prefixes) {
		if err := d.prefix(root, pre, desired); err != nil {
			return nil, plumbing.ZeroHash, err
		}
	}
	slices.Sort(pl.writes)
	slices.Sort(pl.deletes)

	pl.stats.Written, pl.stats.Deleted = len(pl.writes), len(pl.deletes)
	return pl, root, nil
}

func cmpErr(err error, fallback string) error {
	if err != nil {
		return err
	}
	return errors.New(fallback)
}

func underAny(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if pre == "" || p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

func (r *Repo) listTree(ctx context.Context, t *object.Tree, dir string, out map[string]object.TreeEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := path.Join(dir, e.Name)
		if e.Mode != filemode.Dir {
			out[p] = e
			continue
		}
		sub, err := r.repo.TreeObject(e.Hash)
		if err != nil {
			return fmt.Errorf("reading tree %s: %w", p, err)
		}
		if err := r.listTree(ctx, sub, p, out); err != nil {
			return err
		}
	}
	return nil
}

func (r *Repo) storeBlob(h plumbing.Hash, content []byte) error {
	if r.repo.Storer.HasEncodedObject(h) == nil {
		return nil
	}
	obj := r.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write(content); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	_, err = r.repo.Storer.SetEncodedObject(obj)
	return err
}

// commitPlan stores the commit of p, moves the current branch to it and
// brings the work tree and the index along.
func (r *Repo) commitPlan(ctx context.Context, p *plan, ch Change) (plumbing.Hash, error) {
	h, err := r.storeCommit(p, ch)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.updateWorkTree(ctx, p, ch.Files); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.setBranch(h); err != nil {
		return plumbing.ZeroHash, err
	}
	r.log.Info("committed", "commit", h.String(), "written", p.stats.Written, "deleted", p.stats.Deleted, "unchanged", p.stats.Unchanged)
	return h, nil
}

func (r *Repo) storeCommit(p *plan, ch Change) (plumbing.Hash, error) {
	now := r.now()
	sig := func(s Signature) object.Signature {
		if s.When.IsZero() {
			s.When = now
		}
		return object.Signature{Name: s.Name, Email: s.Email, When: s.When}
	}
	committer := ch.Committer
	if committer.Name == "" && committer.Email == "" {
		committer = ch.Author
		committer.When = ch.Committer.When
		if committer.When.IsZero() {
			committer.When = ch.Author.When
		}
	}
	msg := ch.Message
	if ch.Describe != nil {
		msg = ch.Describe(p.paths())
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	c := &object.Commit{
		Author:    sig(ch.Author),
		Committer: sig(committer),
		Message:   msg,
		TreeHash:  p.tree,
	}
	if !p.base.IsZero() {
		c.ParentHashes = []plumbing.Hash{p.base}
	}
	obj := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encoding commit: %w", err)
	}
	h, err := r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("storing commit: %w", err)
	}
	return h, nil
}

// setBranch points the branch HEAD names at h.
func (r *Repo) setBranch(h plumbing.Hash) error {
	head, err := r.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return fmt.Errorf("reading HEAD: %w", err)
	}
	name := plumbing.HEAD
	if head.Type() == plumbing.SymbolicReference {
		name = head.Target()
	}
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(name, h)); err != nil {
		return fmt.Errorf("updating %s: %w", name, err)
	}
	return nil
}

// updateWorkTree writes and deletes the files of p in the work tree (which
// holds p.base) and updates their index entries in one index write.
func (r *Repo) updateWorkTree(ctx context.Context, p *plan, files map[string][]byte) error {
	if r.bare {
		return nil
	}
	idx, err := r.repo.Storer.Index()
	if err != nil {
		return fmt.Errorf("reading index: %w", err)
	}
	entries := make(map[string]*index.Entry, len(idx.Entries))
	for _, e := range idx.Entries {
		entries[e.Name] = e
	}
	for _, name := range p.deletes {
		full := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("deleting %s: %w", name, err)
		}
		removeEmptyParents(r.dir, filepath.Dir(full))
		delete(entries, name)
	}
	for _, name := range p.writes {
		if err := ctx.Err(); err != nil {
			return err
		}
		full := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := writeFileAtomic(full, files[name]); err != nil {
			return err
		}
		info, err := os.Lstat(full)
		if err != nil {
			return fmt.Errorf("stat %s: %w", name, err)
		}
		e := entries[name]
		if e == nil {
			e = &index.Entry{Name: name}
			entries[name] = e
		}
		*e = index.Entry{
			Name:       name,
			Hash:       p.hashes[name],
			Mode:       filemode.Regular,
			Size:       uint32(info.Size()),
			ModifiedAt: info.ModTime(),
		}
	}
	// A file written where the base had a directory replaces the entries
	// below it, and a file in the way of a new directory goes.
	dirs := make(map[string]bool)
	for n := range entries {
		for d := path.Dir(n); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, name := range p.writes {
		if dirs[name] {
			for n := range entries {
				if strings.HasPrefix(n, name+"/") {
					delete(entries, n)
				}
			}
		}
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			delete(entries, d)
		}
	}
	idx.Entries = slices.Collect(maps.Values(entries))
	idx.Cache = nil // the cached tree no longer matches
	idx.ResolveUndo = nil
	if err := r.repo.Storer.SetIndex(idx); err != nil {
		return fmt.Errorf("writing index: %w", err)
	}
	return nil
}

// writeFileAtomic writes b to name through a temporary file and a rename,
// creating parent directories and replacing a file or folder in the way.
func writeFileAtomic(name string, b []byte) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// A file where a directory must go: remove it and try again.
		for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
			if fi, serr := os.Lstat(d); serr == nil && !fi.IsDir() {
				if rerr := os.Remove(d); rerr != nil {
					return fmt.Errorf("creating %s: %w", dir, err)
				}
				break
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
		if err := os.RemoveAll(name); err != nil {
			return fmt.Errorf("replacing directory %s: %w", name, err)
		}
	}
	// The work tree is Git's to restore (its content is in the object
	// store): one fsync per file would cost more than the commit.
	return atomicfile.Write(name, b, atomicfile.NoSync())
}

// removeEmptyParents removes dir and its parents while they are empty,
// stopping at root.
func removeEmptyParents(root, dir string) {
	root = filepath.Clean(root)
	for dir = filepath.Clean(dir); dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			return
		}
	}
}

// treeEditor edits a git tree in memory and stores only the trees that
// changed.
type treeEditor struct {
	r    *Repo
	root *editNode
}

type editNode struct {
	hash     plumbing.Hash // the stored tree this node started from; zero for new
	loaded   bool
	entries  map[string]object.TreeEntry
	children map[string]*editNode
}

func (ed *treeEditor) load(n *editNode) error {
	if n.loaded {
		return nil
	}
	n.loaded = true
	n.entries = make(map[string]object.TreeEntry)
	n.children = make(map[string]*editNode)
	if n.hash.IsZero() {
		return nil
	}
	t, err := ed.r.repo.TreeObject(n.hash)
	if err != nil {
		return fmt.Errorf("reading tree %s: %w", n.hash, err)
	}
	for _, e := range t.Entries {
		n.entries[e.Name] = e
	}
	return nil
}

// dir returns the node of the directory dir, creating it (and replacing a
// file in the way) when create is set; nil when it does not exist.
func (ed *treeEditor) dir(dir string, create bool) (*editNode, error) {
	n := ed.root
	if err := ed.load(n); err != nil {
		return nil, err
	}
	if dir == "." || dir == "" {
		return n, nil
	}
	for _, part := range strings.Split(dir, "/") {
		child, ok := n.children[part]
		if !ok {
			e, exists := n.entries[part]
			switch {
			case exists && e.Mode == filemode.Dir:
				child = &editNode{hash: e.Hash}
			case create:
				delete(n.entries, part)
				child = &editNode{}
			default:
				return nil, nil
			}
			n.children[part] = child
		}
		if err := ed.load(child); err != nil {
			return nil, err
		}
		n = child
	}
	return n, nil
}

func (ed *treeEditor) set(p string, e object.TreeEntry) error {
	n, err := ed.dir(path.Dir(p), true)
	if err != nil {
		return err
	}
	name := path.Base(p)
	delete(n.children, name) // a file replaces a directory
	e.Name = name
	n.entries[name] = e
	return nil
}

func (ed *treeEditor) remove(p string) error {
	n, err := ed.dir(path.Dir(p), false)
	if err != nil || n == nil {
		return err
	}
	delete(n.entries, path.Base(p))
	return nil
}

// write stores every edited tree, bottom up, and returns the root's hash.
// Directories left empty are dropped.
func (ed *treeEditor) write() (plumbing.Hash, error) {
	h, _, err := ed.writeNode(ed.root)
	return h, err
}

func (ed *treeEditor) writeNode(n *editNode) (plumbing.Hash, bool, error) {
	if !n.loaded {
		return n.hash, !n.hash.IsZero(), nil
	}
	for name, child := range n.children {
		h, nonEmpty, err := ed.writeNode(child)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if nonEmpty {
			n.entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
		} else {
			delete(n.entries, name)
		}
	}
	t := &object.Tree{Entries: slices.Collect(maps.Values(n.entries))}
	slices.SortFunc(t.Entries, func(a, b object.TreeEntry) int {
		return strings.Compare(treeSortName(a), treeSortName(b))
	})
	if len(t.Entries) == 0 && n != ed.root {
		return plumbing.ZeroHash, false, nil
	}
	obj := ed.r.repo.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("encoding tree: %w", err)
	}
	h, err := ed.r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("storing tree: %w", err)
	}
	return h, len(t.Entries) > 0, nil
}

// treeSortName is the key git sorts tree entries by: directories sort as
// if their name ended in a slash.
func treeSortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}
