package gitrepo

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Tree reads the files of the commit that ref names into memory, keyed by
// slash-separated path, without touching the work tree. With prefixes, only
// files at or under one of them are read (a prefix names a directory or a
// file; "" or "." is the whole tree). Symbolic links map to their target;
// submodules are left out.
func (r *Repo) Tree(ctx context.Context, ref string, prefixes ...string) (map[string][]byte, error) {
	tr := &treeReader{r: r, ctx: ctx, files: map[string][]byte{}}
	return tr.files, tr.read(ref, prefixes)
}

// TreeModes is Tree that also returns the mode of each file that is not a
// plain one: 0o755 for executables, fs.ModeSymlink|0o777 for symbolic links
// (whose content is then the link's target). Git keeps no other mode bits.
func (r *Repo) TreeModes(ctx context.Context, ref string, prefixes ...string) (map[string][]byte, map[string]fs.FileMode, error) {
	tr := &treeReader{r: r, ctx: ctx, files: map[string][]byte{}, modes: map[string]fs.FileMode{}}
	err := tr.read(ref, prefixes)
	return tr.files, tr.modes, err
}

// treeReader reads a tree into files, and with modes set, the modes of
// executables and links.
type treeReader struct {
	r     *Repo
	ctx   context.Context
	files map[string][]byte
	modes map[string]fs.FileMode
}

func (tr *treeReader) read(ref string, prefixes []string) error {
	c, err := tr.r.resolve(ref)
	if err != nil {
		return err
	}
	root, err := c.Tree()
	if err != nil {
		return fmt.Errorf("reading tree of %s: %w", c.Hash, err)
	}
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	norm, err := cleanPrefixes(prefixes)
	if err != nil {
		return err
	}
	for _, p := range norm {
		if p == "" {
			if err := tr.readTree(root, ""); err != nil {
				return err
			}
			continue
		}
		e, err := root.FindEntry(p)
		if err != nil {
			continue // nothing at this prefix
		}
		if err := tr.readEntry(p, *e); err != nil {
			return err
		}
	}
	return nil
}

func (tr *treeReader) readTree(t *object.Tree, dir string) error {
	if err := tr.ctx.Err(); err != nil {
		return err
	}
	for _, e := range t.Entries {
		if err := tr.readEntry(path.Join(dir, e.Name), e); err != nil {
			return err
		}
	}
	return nil
}

func (tr *treeReader) readEntry(p string, e object.TreeEntry) error {
	switch e.Mode {
	case filemode.Dir:
		t, err := tr.r.repo.TreeObject(e.Hash)
		if err != nil {
			return fmt.Errorf("reading tree %s: %w", p, err)
		}
		return tr.readTree(t, p)
	case filemode.Submodule:
		return nil
	}
	if _, ok := tr.files[p]; ok {
		return nil
	}
	b, err := tr.r.readBlob(e.Hash)
	if err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	tr.files[p] = b
	if tr.modes != nil {
		switch e.Mode {
		case filemode.Executable:
			tr.modes[p] = 0o755
		case filemode.Symlink:
			tr.modes[p] = fs.ModeSymlink | 0o777
		}
	}
	return nil
}

func (r *Repo) readBlob(h plumbing.Hash) ([]byte, error) {
	blob, err := r.repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	b := make([]byte, 0, blob.Size)
	buf := make([]byte, 32*1024)
	for {
		n, err := rd.Read(buf)
		b = append(b, buf[:n]...)
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// cleanPrefixes validates prefixes and returns them cleaned, with "" for
// the whole tree. Overlapping prefixes are kept; readers dedupe by path.
func cleanPrefixes(prefixes []string) ([]string, error) {
	out := make([]string, 0, len(prefixes))
	for _, p := range prefixes {
		if p == "" || p == "." || p == "/" {
			out = append(out, "")
			continue
		}
		c, err := cleanPath(strings.TrimSuffix(p, "/"))
		if err != nil {
			return nil, fmt.Errorf("prefix %q: %w", p, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// cleanPath checks that p is a relative, slash-separated path inside the
// work tree that is not in .git, and returns it.
func cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path")
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("path must be relative")
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("path holds a NUL byte")
	case path.Clean(p) != p:
		return "", fmt.Errorf("path is not clean (want %q)", path.Clean(p))
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." || strings.EqualFold(part, ".git") {
			return "", fmt.Errorf("path element %q is not allowed", part)
		}
	}
	return p, nil
}
