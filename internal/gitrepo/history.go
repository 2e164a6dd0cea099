package gitrepo

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Signature is the author or committer of a commit.
type Signature struct {
	Name  string
	Email string
	// When is the time of the signature; zero means "now" when committing.
	When time.Time
}

// Commit describes one commit.
type Commit struct {
	Hash      string
	Author    Signature
	Committer Signature
	// Subject is the first line of the message.
	Subject string
	Message string
}

func commitOf(c *object.Commit) Commit {
	subject, _, _ := strings.Cut(c.Message, "\n")
	return Commit{
		Hash:      c.Hash.String(),
		Author:    Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer: Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
		Subject:   strings.TrimSpace(subject),
		Message:   c.Message,
	}
}

// LastCommitFor finds, for each path (a file or a directory), the last
// commit reachable from ref that changed it — what `git log -1 -- path`
// prints, with git's default history simplification: at a merge the walk
// follows the first parent whose content at the path is the same, so a
// merge is the answer only when it differs from every parent. Paths that
// never existed are left out of the result. All paths are answered in one
// walk of the history that stops as soon as every path is answered.
//
// In a shallow clone the walk stops at the shallow boundary, which then
// counts as the commit that added whatever it holds.
func (r *Repo) LastCommitFor(ctx context.Context, ref string, paths ...string) (map[string]Commit, error) {
	start, err := r.resolve(ref)
	if err != nil {
		return nil, err
	}
	ps, err := newPathSet(paths)
	if err != nil {
		return nil, err
	}
	w, err := r.newWalker()
	if err != nil {
		return nil, err
	}
	out := make(map[string]Commit, len(ps.names))
	if len(ps.names) == 0 {
		return out, nil
	}
	w.cache(start)

	pending := map[plumbing.Hash][]int{start.Hash: ps.all()}
	var q commitQueue
	q.push(start)
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := q.pop()
		idxs := pending[c.Hash]
		delete(pending, c.Hash)
		if len(idxs) == 0 {
			continue
		}
		parents, err := w.parents(c)
		if err != nil {
			return nil, err
		}
		remaining := idxs
		if len(parents) == 0 {
			// A root (or the shallow boundary) changed whatever it holds.
			remaining, err = w.differing(ps, c.TreeHash, plumbing.ZeroHash, remaining, 0, nil)
			if err != nil {
				return nil, err
			}
		}
		for _, p := range parents {
			if len(remaining) == 0 {
				break
			}
			diff, err := w.differing(ps, c.TreeHash, p.TreeHash, remaining, 0, nil)
			if err != nil {
				return nil, err
			}
			same := without(remaining, diff)
			if len(same) > 0 {
				if len(pending[p.Hash]) == 0 {
					q.push(p)
				}
				pending[p.Hash] = mergeSorted(pending[p.Hash], same)
			}
			remaining = diff
		}
		if len(remaining) > 0 {
			cm := commitOf(c)
			for _, i := range remaining {
				out[ps.names[i]] = cm
			}
		}
	}
	return out, nil
}

// History lists the commits reachable from ref that changed any of paths,
// newest first (by committer date), with the same history simplification
// as `git log -- paths`. With no paths it lists every commit. A limit above
// zero stops the list at that many commits.
func (r *Repo) History(ctx context.Context, ref string, limit int, paths ...string) ([]Commit, error) {
	start, err := r.resolve(ref)
	if err != nil {
		return nil, err
	}
	ps, err := newPathSet(paths)
	if err != nil {
		return nil, err
	}
	w, err := r.newWalker()
	if err != nil {
		return nil, err
	}
	all := ps.all()
	seen := map[plumbing.Hash]bool{start.Hash: true}
	var q commitQueue
	q.push(start)
	var out []Commit
	for q.Len() > 0 && (limit <= 0 || len(out) < limit) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := q.pop()
		parents, err := w.parents(c)
		if err != nil {
			return nil, err
		}
		show, follow := true, parents
		if len(all) > 0 {
			if len(parents) == 0 {
				diff, err := w.differing(ps, c.TreeHash, plumbing.ZeroHash, all, 0, nil)
				if err != nil {
					return nil, err
				}
				show = len(diff) > 0
			}
			for _, p := range parents {
				diff, err := w.differing(ps, c.TreeHash, p.TreeHash, all, 0, nil)
				if err != nil {
					return nil, err
				}
				if len(diff) == 0 {
					show, follow = false, []*object.Commit{p}
					break
				}
			}
		}
		if show {
			out = append(out, commitOf(c))
		}
		for _, p := range follow {
			if !seen[p.Hash] {
				seen[p.Hash] = true
				q.push(p)
			}
		}
	}
	return out, nil
}

// pathSet is a set of paths split into components and sorted component by
// component, so that the paths under one directory are contiguous.
type pathSet struct {
	names []string
	comps [][]string
}

func newPathSet(paths []string) (*pathSet, error) {
	uniq := make(map[string]bool, len(paths))
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		c, err := cleanPath(strings.TrimSuffix(p, "/"))
		if err != nil {
			return nil, fmt.Errorf("path %q: %w", p, err)
		}
		if !uniq[c] {
			uniq[c] = true
			names = append(names, c)
		}
	}
	ps := &pathSet{names: names, comps: make([][]string, len(names))}
	for i, n := range names {
		ps.comps[i] = strings.Split(n, "/")
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return slices.Compare(ps.comps[a], ps.comps[b]) })
	sorted := &pathSet{names: make([]string, len(names)), comps: make([][]string, len(names))}
	for i, o := range order {
		sorted.names[i], sorted.comps[i] = ps.names[o], ps.comps[o]
	}
	return sorted, nil
}

func (ps *pathSet) all() []int {
	out := make([]int, len(ps.names))
	for i := range out {
		out[i] = i
	}
	return out
}

// walker reads commits and trees with caches for one walk.
type walker struct {
	r       *Repo
	shallow map[plumbing.Hash]bool
	commits map[plumbing.Hash]*object.Commit
	trees   map[plumbing.Hash]treeEntries
}

// treeEntries maps the names in one tree to their entries.
type treeEntries map[string]object.TreeEntry

// maxCachedTrees bounds the tree cache of one walk; it is cleared when full.
const maxCachedTrees = 50_000

func (r *Repo) newWalker() (*walker, error) {
	sh, err := r.repo.Storer.Shallow()
	if err != nil {
		return nil, fmt.Errorf("reading shallow commits: %w", err)
	}
	w := &walker{
		r:       r,
		shallow: make(map[plumbing.Hash]bool, len(sh)),
		commits: make(map[plumbing.Hash]*object.Commit),
		trees:   make(map[plumbing.Hash]treeEntries),
	}
	for _, h := range sh {
		w.shallow[h] = true
	}
	return w, nil
}

func (w *walker) cache(c *object.Commit) { w.commits[c.Hash] = c }

// parents returns the parents of c, none at the shallow boundary.
func (w *walker) parents(c *object.Commit) ([]*object.Commit, error) {
	if w.shallow[c.Hash] {
		return nil, nil
	}
	out := make([]*object.Commit, 0, len(c.ParentHashes))
	for _, h := range c.ParentHashes {
		if p, ok := w.commits[h]; ok {
			out = append(out, p)
			continue
		}
		p, err := w.r.repo.CommitObject(h)
		if err != nil {
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				return nil, nil // history cut short: treat c as a boundary
			}
			return nil, fmt.Errorf("reading commit %s: %w", h, err)
		}
		w.commits[h] = p
		out = append(out, p)
	}
	return out, nil
}

func (w *walker) tree(h plumbing.Hash) (treeEntries, error) {
	if h.IsZero() {
		return nil, nil
	}
	if t, ok := w.trees[h]; ok {
		return t, nil
	}
	m, err := w.r.readTreeEntries(h)
	if err != nil {
		return nil, fmt.Errorf("reading tree %s: %w", h, err)
	}
	if len(w.trees) >= maxCachedTrees {
		clear(w.trees)
	}
	w.trees[h] = m
	return m, nil
}

// readTreeEntries reads and parses a tree object. It is leaner than
// object.Tree's decoder, which builds sort keys a walk never needs.
func (r *Repo) readTreeEntries(h plumbing.Hash) (treeEntries, error) {
	obj, err := r.repo.Storer.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	b := make([]byte, obj.Size())
	if _, err := io.ReadFull(rd, b); err != nil {
		return nil, err
	}
	return parseTree(b)
}

// parseTree parses the body of a tree object: entries of
// "<octal mode> <name>\x00<20-byte hash>".
func parseTree(b []byte) (treeEntries, error) {
	m := make(treeEntries, bytes.Count(b, []byte{0}))
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 {
			return nil, errors.New("malformed tree: no mode")
		}
		var mode uint32
		for _, c := range b[:sp] {
			if c < '0' || c > '7' {
				return nil, errors.New("malformed tree: bad mode")
			}
			mode = mode<<3 | uint32(c-'0')
		}
		b = b[sp+1:]
		nul := bytes.IndexByte(b, 0)
		if nul <= 0 || len(b) < nul+1+20 {
			return nil, errors.New("malformed tree: truncated entry")
		}
		name := string(b[:nul])
		var hash plumbing.Hash
		copy(hash[:], b[nul+1:nul+21])
		b = b[nul+21:]
		m[name] = object.TreeEntry{Mode: filemode.FileMode(mode), Hash: hash}
	}
	return m, nil
}

// differing appends to out the paths among idxs (sorted, all sharing their
// first depth components) whose entries differ between trees a and b. A
// zero hash is an empty tree. Identical subtrees are skipped by hash, so
// the cost follows what changed, not the size of the trees.
func (w *walker) differing(ps *pathSet, a, b plumbing.Hash, idxs []int, depth int, out []int) ([]int, error) {
	if a == b || len(idxs) == 0 {
		return out, nil
	}
	ta, err := w.tree(a)
	if err != nil {
		return nil, err
	}
	tb, err := w.tree(b)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(idxs); {
		name := ps.comps[idxs[i]][depth]
		j := i + 1
		for j < len(idxs) && ps.comps[idxs[j]][depth] == name {
			j++
		}
		group := idxs[i:j]
		i = j
		ea, eb := ta[name], tb[name]
		if ea == eb {
			continue
		}
		// The path ending here (sorted first) differs; deeper paths differ
		// only where the subtrees do.
		k := 0
		for k < len(group) && len(ps.comps[group[k]]) == depth+1 {
			out = append(out, group[k])
			k++
		}
		if k < len(group) {
			out, err = w.differing(ps, dirHash(ea), dirHash(eb), group[k:], depth+1, out)
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func dirHash(e object.TreeEntry) plumbing.Hash {
	if e.Mode == filemode.Dir {
		return e.Hash
	}
	return plumbing.ZeroHash
}

// without returns the sorted ints of all that are not in some (sorted).
func without(all, some []int) []int {
	if len(some) == 0 {
		return all
	}
	out := make([]int, 0, len(all)-len(some))
	j := 0
	for _, v := range all {
		for j < len(some) && some[j] < v {
			j++
		}
		if j < len(some) && some[j] == v {
			continue
		}
		out = append(out, v)
	}
	return out
}

func mergeSorted(a, b []int) []int {
	if len(a) == 0 {
		return slices.Clone(b)
	}
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// commitQueue pops commits newest first by committer date, the order git
// log walks in; commits of equal date come out in the order they went in.
type commitQueue struct {
	items []queued
	seq   int
}

type queued struct {
	c   *object.Commit
	seq int
}

func (q *commitQueue) Len() int { return len(q.items) }
func (q *commitQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if c := a.c.Committer.When.Compare(b.c.Committer.When); c != 0 {
		return c > 0
	}
	return cmp.Less(a.seq, b.seq)
}
func (q *commitQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *commitQueue) Push(x any)    { q.items = append(q.items, x.(queued)) }
func (q *commitQueue) Pop() any {
	it := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return it
}

func (q *commitQueue) push(c *object.Commit) {
	q.seq++
	heap.Push(q, queued{c: c, seq: q.seq})
}

func (q *commitQueue) pop() *object.Commit { return heap.Pop(q).(queued).c }
