package load

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// memFS is a read-only fs.FS over files held in memory, such as a Git tree.
// Folders are derived once, so every lookup is a map access (fstest.MapFS
// scans every file for a missing name, which makes loading quadratic).
// Symbolic links, as a Git tree holds them (a path and its target), are
// followed as a file system follows them, and reported by Lstat and
// ReadLink (fs.ReadLinkFS), so that the loader treats a link in a commit
// as it treats one on disk.
type memFS struct {
	files map[string][]byte
	links map[string]string   // link → its target, as written
	dirs  map[string][]string // folder → sorted entry names
}

func newMemFS(files map[string][]byte) *memFS { return newMemFSLinks(files, nil) }

func newMemFSLinks(files map[string][]byte, links map[string]string) *memFS {
	m := &memFS{files: files, links: links, dirs: map[string][]string{".": nil}}
	seen := map[string]bool{}
	all := make([]string, 0, len(files)+len(links))
	for p := range files {
		all = append(all, p)
	}
	for p := range links {
		if _, dup := files[p]; !dup {
			all = append(all, p)
		}
	}
	for _, p := range all {
		for child := p; child != "."; {
			parent := path.Dir(child)
			key := parent + "\x00" + path.Base(child)
			if seen[key] {
				break
			}
			seen[key] = true
			m.dirs[parent] = append(m.dirs[parent], path.Base(child))
			child = parent
		}
	}
	for d := range m.dirs {
		slices.Sort(m.dirs[d])
	}
	return m
}

// resolve follows the links on the way to name; false when one leaves the
// file system or they loop.
func (m *memFS) resolve(name string) (string, bool) {
	if len(m.links) == 0 {
		return name, true
	}
	rest := strings.Split(name, "/")
	cur := "."
	for hops := 0; len(rest) > 0; {
		next := path.Join(cur, rest[0])
		rest = rest[1:]
		target, isLink := m.links[next]
		if !isLink {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops || path.IsAbs(target) {
			return "", false
		}
		joined := path.Join(cur, target)
		if joined == ".." || strings.HasPrefix(joined, "../") {
			return "", false
		}
		rest = append(strings.Split(joined, "/"), rest...)
		cur = "."
	}
	return cur, true
}

func (m *memFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	resolved, ok := m.resolve(name)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	name = resolved
	if b, ok := m.files[name]; ok {
		return &memFile{name: name, r: bytes.NewReader(b), size: int64(len(b))}, nil
	}
	if entries, ok := m.dirs[name]; ok {
		return &memDir{fs: m, name: name, entries: entries}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadLink returns the target of the link name.
func (m *memFS) ReadLink(name string) (string, error) {
	if t, ok := m.links[name]; ok {
		return t, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

// Lstat describes name without following it when it is a link.
func (m *memFS) Lstat(name string) (fs.FileInfo, error) {
	if t, ok := m.links[name]; ok {
		return memInfo{name: name, size: int64(len(t)), link: true}, nil
	}
	return fs.Stat(m, name)
}

type memInfo struct {
	name string
	size int64
	dir  bool
	link bool
}

func (i memInfo) Name() string { return path.Base(i.name) }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.link {
		return fs.ModeSymlink | 0o777
	}
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time         { return time.Time{} }
func (i memInfo) IsDir() bool                { return i.dir }
func (i memInfo) Sys() any                   { return nil }
func (i memInfo) Type() fs.FileMode          { return i.Mode().Type() }
func (i memInfo) Info() (fs.FileInfo, error) { return i, nil }

type memFile struct {
	name string
	r    *bytes.Reader
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{name: f.name, size: f.size}, nil }
func (f *memFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *memFile) Close() error               { return nil }

type memDir struct {
	fs      *memFS
	name    string
	entries []string
	off     int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return memInfo{name: d.name, dir: true}, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: fs.ErrInvalid}
}
func (d *memDir) Close() error { return nil }

func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.off += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i, e := range rest {
		full := path.Join(d.name, e)
		if t, ok := d.fs.links[full]; ok {
			out[i] = memInfo{name: full, size: int64(len(t)), link: true}
		} else if b, ok := d.fs.files[full]; ok {
			out[i] = memInfo{name: full, size: int64(len(b))}
		} else {
			out[i] = memInfo{name: full, dir: true}
		}
	}
	return out, nil
}
