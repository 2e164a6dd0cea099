package gitrepo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// memDir is a directory of desired files, hashed the way git would store
// it, so that whole subtrees that did not change are recognised by hash
// without reading them.
type memDir struct {
	files map[string]object.TreeEntry
	dirs  map[string]*memDir
	hash  plumbing.Hash
	count int // files at or below
}

func newMemDir() *memDir {
	return &memDir{files: map[string]object.TreeEntry{}, dirs: map[string]*memDir{}}
}

// add puts the regular file at rel (slash-separated, relative to d) into d.
func (d *memDir) add(rel string, h plumbing.Hash, full string) error {
	return d.addEntry(rel, object.TreeEntry{Mode: filemode.Regular, Hash: h}, full)
}

// addEntry puts the entry at rel into d.
func (d *memDir) addEntry(rel string, e object.TreeEntry, full string) error {
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		if _, ok := d.files[part]; ok {
			return fmt.Errorf("file %q: a parent directory is also a file", full)
		}
		sub, ok := d.dirs[part]
		if !ok {
			sub = newMemDir()
			d.dirs[part] = sub
		}
		d = sub
	}
	name := parts[len(parts)-1]
	if _, ok := d.dirs[name]; ok {
		return fmt.Errorf("file %q: it is also a directory", full)
	}
	e.Name = name
	d.files[name] = e
	return nil
}

// seal computes the tree hashes of d and everything below it.
func (d *memDir) seal() error {
	entries := make([]object.TreeEntry, 0, len(d.files)+len(d.dirs))
	d.count = len(d.files)
	for _, e := range d.files {
		entries = append(entries, e)
	}
	for name, sub := range d.dirs {
		if err := sub.seal(); err != nil {
			return err
		}
		d.count += sub.count
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: sub.hash})
	}
	slices.SortFunc(entries, func(a, b object.TreeEntry) int {
		return strings.Compare(treeSortName(a), treeSortName(b))
	})
	obj := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return fmt.Errorf("hashing tree: %w", err)
	}
	d.hash = obj.Hash()
	return nil
}

// differ compares desired files with a base tree and fills a plan's
// writes, deletes and counts, reading only the subtrees whose hashes differ.
type differ struct {
	r    *Repo
	ctx  context.Context
	pl   *plan
	keep func(string, []byte) bool // Change.Keep
}

// drop deletes the file e at p, which is not desired, unless keep keeps it.
func (d *differ) drop(p string, e object.TreeEntry) error {
	if d.keep != nil && e.Mode.IsFile() {
		b, err := d.r.readBlob(e.Hash)
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		if d.keep(p, b) {
			return nil
		}
	}
	d.pl.deletes = append(d.pl.deletes, p)
	return nil
}

// prefix compares the desired files at or under pre with the tree root.
func (d *differ) prefix(root plumbing.Hash, pre string, desired map[string]plumbing.Hash) error {
	var existing object.TreeEntry // zero: nothing there
	if pre == "" {
		if !root.IsZero() {
			existing = object.TreeEntry{Mode: filemode.Dir, Hash: root}
		}
	} else if !root.IsZero() {
		t, err := d.r.repo.TreeObject(root)
		if err != nil {
			return fmt.Errorf("reading tree %s: %w", root, err)
		}
		if e, err := t.FindEntry(pre); err == nil {
			existing = *e
		}
	}

	if h, ok := desired[pre]; ok && pre != "" {
		// The prefix is a single file.
		for p := range desired {
			if strings.HasPrefix(p, pre+"/") {
				return fmt.Errorf("file %q: a parent directory is also a file", p)
			}
		}
		return d.file(pre, existing, h)
	}
	want := newMemDir()
	for _, p := range slices.Sorted(maps.Keys(desired)) {
		rel, ok := strings.CutPrefix(p, pre+"/")
		if pre == "" {
			rel, ok = p, true
		}
		if !ok {
			continue
		}
		if err := want.add(rel, desired[p], p); err != nil {
			return err
		}
	}
	if err := want.seal(); err != nil {
		return err
	}
	if existing.Mode != filemode.Dir && existing.Hash != plumbing.ZeroHash {
		d.pl.deletes = append(d.pl.deletes, pre) // a file where the directory goes
		existing = object.TreeEntry{}
	}
	return d.dir(pre, existing.Hash, want)
}

// file compares one desired file with the entry at p.
func (d *differ) file(p string, existing object.TreeEntry, h plumbing.Hash) error {
	switch {
	case existing.Mode == filemode.Regular && existing.Hash == h:
		d.pl.stats.Unchanged++
		return nil
	case existing.Mode == filemode.Dir:
		if err := d.deleteAll(p, existing.Hash, false); err != nil { // a file goes where the folder is
			return err
		}
	}
	d.pl.writes = append(d.pl.writes, p)
	return nil
}

// dir compares the desired directory want with the tree have (zero for
// none) at dir.
func (d *differ) dir(dir string, have plumbing.Hash, want *memDir) error {
	if have == want.hash {
		d.pl.stats.Unchanged += want.count
		return nil
	}
	if err := d.ctx.Err(); err != nil {
		return err
	}
	entries := map[string]object.TreeEntry{}
	if !have.IsZero() {
		t, err := d.r.repo.TreeObject(have)
		if err != nil {
			return fmt.Errorf("reading tree %s: %w", dir, err)
		}
		for _, e := range t.Entries {
			entries[e.Name] = e
		}
	}
	join := func(name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	for name, f := range want.files {
		if err := d.file(join(name), entries[name], f.Hash); err != nil {
			return err
		}
	}
	for name, sub := range want.dirs {
		e := entries[name]
		if e.Mode != filemode.Dir {
			if !e.Hash.IsZero() {
				d.pl.deletes = append(d.pl.deletes, join(name))
			}
			e = object.TreeEntry{}
		}
		if err := d.dir(join(name), e.Hash, sub); err != nil {
			return err
		}
	}
	for name, e := range entries {
		if _, ok := want.files[name]; ok {
			continue
		}
		if _, ok := want.dirs[name]; ok {
			continue
		}
		if e.Mode == filemode.Dir {
			if err := d.deleteAll(join(name), e.Hash, true); err != nil {
				return err
			}
			continue
		}
		if err := d.drop(join(name), e); err != nil {
			return err
		}
	}
	return nil
}

// deleteAll marks every file in the tree h at dir for deletion; with
// mayKeep, Change.Keep may keep some.
func (d *differ) deleteAll(dir string, h plumbing.Hash, mayKeep bool) error {
	t, err := d.r.repo.TreeObject(h)
	if err != nil {
		return fmt.Errorf("reading tree %s: %w", dir, err)
	}
	files := map[string]object.TreeEntry{}
	if err := d.r.listTree(d.ctx, t, dir, files); err != nil {
		return err
	}
	for p, e := range files {
		if !mayKeep {
			d.pl.deletes = append(d.pl.deletes, p)
		} else if err := d.drop(p, e); err != nil {
			return err
		}
	}
	return nil
}

// outermost drops prefixes that lie inside another prefix.
func outermost(prefixes []string) []string {
	var out []string
	for _, p := range slices.Sorted(slices.Values(prefixes)) {
		if !slices.ContainsFunc(out, func(o string) bool { return o == "" || p == o || strings.HasPrefix(p, o+"/") }) {
			out = append(out, p)
		}
	}
	return out
}
