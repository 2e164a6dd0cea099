package spec

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"slices"
	"time"
)

// memFS is a read-only fs.FS over files held in memory, such as a Git tree.
// Folders are derived once, so every lookup is a map access (fstest.MapFS
// scans every file for a missing name, which makes loading quadratic).
type memFS struct {
	files map[string][]byte
	dirs  map[string][]string // folder → sorted entry names
}

func newMemFS(files map[string][]byte) *memFS {
	m := &memFS{files: files, dirs: map[string][]string{".": nil}}
	seen := map[string]bool{}
	for p := range files {
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

func (m *memFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if b, ok := m.files[name]; ok {
		return &memFile{name: name, r: bytes.NewReader(b), size: int64(len(b))}, nil
	}
	if entries, ok := m.dirs[name]; ok {
		return &memDir{fs: m, name: name, entries: entries}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return path.Base(i.name) }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
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
		if b, ok := d.fs.files[full]; ok {
			out[i] = memInfo{name: full, size: int64(len(b))}
		} else {
			out[i] = memInfo{name: full, dir: true}
		}
	}
	return out, nil
}
