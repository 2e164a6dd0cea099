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
	return r.tree(ctx, ref, nil, prefixes)
}

// TreeModes is Tree that also returns the mode of each file that is not a
// plain one: 0o755 for executables, fs.ModeSymlink|0o777 for symbolic links
// (whose content is then the link's target). Git keeps no other mode bits.
func (r *Repo) TreeModes(ctx context.Context, ref string, prefixes ...string) (map[string][]byte, map[string]fs.FileMode, error) {
	modes := map[string]fs.FileMode{}
	files, err := r.tree(ctx, ref, modes, prefixes)
	return files, modes, err
}

func (r *Repo) tree(ctx context.Context, ref string, modes map[string]fs.FileMode, prefixes []string) (map[string][]byte, error) {
	c, err := r.resolve(ref)
	if err != nil {
		return nil, err
	}
	root, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", c.Hash, err)
	}
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	norm, err := cleanPrefixes(prefixes)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte)
	for _, p := range norm {
		if p == "" {
			if err := r.readTree(ctx, root, "", out, modes); err != nil {
				return nil, err
			}
			continue
		}
		e, err := root.FindEntry(p)
		if err != nil {
			continue // nothing at this prefix
		}
		if err := r.readEntry(ctx, p, *e, out, modes); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *Repo) readTree(ctx context.Context, t *object.Tree, dir string, out map[string][]byte, modes map[string]fs.FileMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, e := range t.Entries {
		if err := r.readEntry(ctx, path.Join(dir, e.Name), e, out, modes); err != nil {
			return err
		}
	}
	return nil
}

func (r *Repo) readEntry(ctx context.Context, p string, e object.TreeEntry, out map[string][]byte, modes map[string]fs.FileMode) error {
	switch e.Mode {
	case filemode.Dir:
		t, err := r.repo.TreeObject(e.Hash)
		if err != nil {
			return fmt.Errorf("reading tree %s: %w", p, err)
		}
		return r.readTree(ctx, t, p, out, modes)
	case filemode.Submodule:
		return nil
	}
	if _, ok := out[p]; ok {
		return nil
	}
	b, err := r.readBlob(e.Hash)
	if err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	out[p] = b
	if modes != nil {
		switch e.Mode {
		case filemode.Executable:
			modes[p] = 0o755
		case filemode.Symlink:
			modes[p] = fs.ModeSymlink | 0o777
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
