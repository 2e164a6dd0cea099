package build

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
	maxLinkHops    = 40
)

// fsLayer is one layer of a stage's filesystem: pulled from a registry, or
// made by this build and kept in memory.
type fsLayer struct {
	remote v1.Layer
	own    map[string]*fileEntry
}

// stageFS is the filesystem of a stage, read from its layers on demand.
// Remote layers are streamed: a single file is looked for from the top
// layer down and the search stops where it is found; listing a directory
// or matching a wildcard indexes every layer's headers once.
type stageFS struct {
	layers []fsLayer // bottom first
	idx    *fsIndex
}

func (s *stageFS) clone() *stageFS {
	return &stageFS{layers: slices.Clone(s.layers)}
}

// addOwn puts a layer this build made on top.
func (s *stageFS) addOwn(entries []*fileEntry) {
	m := make(map[string]*fileEntry, len(entries))
	for _, e := range entries {
		m[e.path] = e
	}
	s.layers = append(s.layers, fsLayer{own: m})
	if s.idx != nil {
		for _, p := range slices.Sorted(maps.Keys(m)) {
			s.idx.put(&idxEntry{fileEntry: *m[p], layer: len(s.layers) - 1, loaded: true})
		}
	}
}

// cleanAbs cleans a path found in a tar header or a Dockerfile into the
// absolute form used as a key.
func cleanAbs(p string) string { return path.Clean("/" + p) }

// ancestors returns p's parent directories, "/" excluded, nearest last.
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}

// findFile looks p up from the top layer down. It returns the entry there
// (with its content when it is a regular file) and sure=true, or nil and
// sure=true when p does not exist. sure=false means the answer depends on a
// symbolic or hard link, and the full index must be asked.
func (s *stageFS) findFile(p string) (*fileEntry, bool, error) {
	anc := ancestors(p)
	for i := len(s.layers) - 1; i >= 0; i-- {
		l := s.layers[i]
		if l.own != nil {
			if e, ok := l.own[p]; ok {
				if e.isSymlink() {
					return nil, false, nil
				}
				return e, true, nil
			}
			for _, a := range anc {
				if e, ok := l.own[a]; ok && !e.isDir() {
					return nil, !e.isSymlink(), nil
				}
			}
			prefix := p + "/"
			for q := range l.own {
				if strings.HasPrefix(q, prefix) {
					return nil, false, nil // a directory implied by its contents
				}
			}
			continue
		}
		e, hidden, sure, err := scanLayerFor(l.remote, p, anc)
		if err != nil || !sure {
			return nil, sure, err
		}
		if e != nil {
			return e, true, nil
		}
		if hidden {
			return nil, true, nil
		}
	}
	return nil, true, nil
}

// scanLayerFor streams one layer looking for p. hidden reports a whiteout
// or a non-directory that hides p in lower layers.
func scanLayerFor(l v1.Layer, p string, anc []string) (found *fileEntry, hidden, sure bool, err error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, false, false, fmt.Errorf("reading layer: %w", err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	isAnc := make(map[string]bool, len(anc))
	for _, a := range anc {
		isAnc[a] = true
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, false, fmt.Errorf("reading layer: %w", err)
		}
		name := cleanAbs(h.Name)
		dir, base := path.Split(name)
		dir = path.Clean(dir)
		if base == whiteoutOpaque {
			if isAnc[dir] {
				hidden = true
			}
			continue
		}
		if strings.HasPrefix(base, whiteoutPrefix) {
			target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
			if target == p || isAnc[target] {
				hidden = true
			}
			continue
		}
		switch {
		case strings.HasPrefix(name, p+"/"):
			return nil, false, false, nil // a directory implied by its contents
		case name == p:
			switch h.Typeflag {
			case tar.TypeSymlink, tar.TypeLink:
				return nil, false, false, nil
			case tar.TypeReg:
				data, err := io.ReadAll(tr)
				if err != nil {
					return nil, false, false, fmt.Errorf("reading layer: %w", err)
				}
				found = entryFromHeader(h, name)
				found.data = data
			default:
				found = entryFromHeader(h, name)
			}
		case isAnc[name] && h.Typeflag != tar.TypeDir:
			if h.Typeflag == tar.TypeSymlink {
				return nil, false, false, nil
			}
			hidden = true
		}
	}
	return found, hidden, true, nil
}

func entryFromHeader(h *tar.Header, name string) *fileEntry {
	return &fileEntry{path: name, mode: fileMode(h), uid: h.Uid, gid: h.Gid, link: h.Linkname}
}

// fsIndex is the merged view of every layer's headers.
type fsIndex struct {
	entries map[string]*idxEntry
}

type idxEntry struct {
	fileEntry
	layer    int
	hardlink string // for hard links: the path whose content this shares
	loaded   bool   // data holds the content
}

// index builds (once) the merged view of the stage's layers.
func (s *stageFS) index() (*fsIndex, error) {
	if s.idx != nil {
		return s.idx, nil
	}
	x := &fsIndex{entries: map[string]*idxEntry{}}
	for i, l := range s.layers {
		if l.own != nil {
			for _, p := range slices.Sorted(maps.Keys(l.own)) {
				x.put(&idxEntry{fileEntry: *l.own[p], layer: i, loaded: true})
			}
			continue
		}
		if err := x.applyRemote(l.remote, i); err != nil {
			return nil, err
		}
	}
	s.idx = x
	return x, nil
}

func (x *fsIndex) applyRemote(l v1.Layer, layer int) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return fmt.Errorf("reading layer: %w", err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var adds []*idxEntry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading layer: %w", err)
		}
		name := cleanAbs(h.Name)
		dir, base := path.Split(name)
		dir = path.Clean(dir)
		switch {
		case base == whiteoutOpaque:
			x.removeBelow(dir)
			continue
		case strings.HasPrefix(base, whiteoutPrefix):
			target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
			delete(x.entries, target)
			x.removeBelow(target)
			continue
		case name == "/":
			continue
		}
		e := &idxEntry{fileEntry: *entryFromHeader(h, name), layer: layer}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeSymlink, tar.TypeReg:
		case tar.TypeLink:
			e.hardlink = cleanAbs(h.Linkname)
			e.link = ""
		default:
			continue // devices and pipes are not copied
		}
		adds = append(adds, e)
	}
	// Whiteouts apply to lower layers only, so this layer's entries go last.
	for _, e := range adds {
		x.put(e)
	}
	return nil
}

// put adds e; a non-directory replaces everything below its path. Missing
// parent directories are implied, as extracting the layer would make them.
func (x *fsIndex) put(e *idxEntry) {
	if old, ok := x.entries[e.path]; ok && old.isDir() && !e.isDir() {
		x.removeBelow(e.path)
	}
	for _, a := range ancestors(e.path) {
		if _, ok := x.entries[a]; !ok {
			x.entries[a] = &idxEntry{fileEntry: fileEntry{path: a, mode: fs.ModeDir | 0o755}, layer: e.layer, loaded: true}
		}
	}
	x.entries[e.path] = e
}

func (x *fsIndex) removeBelow(dir string) {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for p := range x.entries {
		if strings.HasPrefix(p, prefix) {
			delete(x.entries, p)
		}
	}
}

var rootDir = &idxEntry{fileEntry: fileEntry{path: "/", mode: fs.ModeDir | 0o755}, loaded: true}

// resolve follows symbolic links along p (and at its end when followLast)
// and returns the entry reached, or nil when there is none.
func (x *fsIndex) resolve(p string, followLast bool) (*idxEntry, error) {
	comps := splitPath(p)
	cur := "/"
	hops := 0
	for i := 0; i < len(comps); i++ {
		next := path.Join(cur, comps[i])
		e := x.entries[next]
		if e == nil {
			return nil, nil
		}
		if e.isSymlink() && (i < len(comps)-1 || followLast) {
			if hops++; hops > maxLinkHops {
				return nil, fmt.Errorf("%s: too many levels of symbolic links", p)
			}
			target := e.link
			if !path.IsAbs(target) {
				target = path.Join(cur, target)
			}
			comps = append(splitPath(target), comps[i+1:]...)
			cur, i = "/", -1
			continue
		}
		if !e.isDir() && i < len(comps)-1 {
			return nil, nil
		}
		cur = next
	}
	if cur == "/" {
		return rootDir, nil
	}
	return x.entries[cur], nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// below returns the entries under dir, sorted by path.
func (x *fsIndex) below(dir string) []*idxEntry {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var out []*idxEntry
	for p, e := range x.entries {
		if strings.HasPrefix(p, prefix) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *idxEntry) int { return strings.Compare(a.path, b.path) })
	return out
}

// glob returns the paths matching pattern, sorted.
func (x *fsIndex) glob(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	var out []string
	for p := range x.entries {
		if ok, _ := path.Match(pattern, p); ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// load fills in the content of the regular files among entries, reading
// each remote layer that holds one once.
func (s *stageFS) load(entries []*idxEntry) error {
	x := s.idx
	want := map[int]map[string]*idxEntry{}
	var need func(e *idxEntry) error
	need = func(e *idxEntry) error {
		if e.loaded || !e.mode.IsRegular() {
			return nil
		}
		if e.hardlink != "" {
			t := x.entries[e.hardlink]
			if t == nil || t.hardlink != "" || !t.mode.IsRegular() {
				return fmt.Errorf("%s: hard link to missing file %s", e.path, e.hardlink)
			}
			return need(t)
		}
		if want[e.layer] == nil {
			want[e.layer] = map[string]*idxEntry{}
		}
		want[e.layer][e.path] = e
		return nil
	}
	for _, e := range entries {
		if err := need(e); err != nil {
			return err
		}
	}
	for _, layer := range slices.Sorted(maps.Keys(want)) {
		if err := readContents(s.layers[layer].remote, want[layer]); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if e.hardlink != "" && !e.loaded {
			t := x.entries[e.hardlink]
			e.data, e.loaded = t.data, true
		}
	}
	return nil
}

func readContents(l v1.Layer, want map[string]*idxEntry) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return fmt.Errorf("reading layer: %w", err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	left := len(want)
	for left > 0 {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading layer: %w", err)
		}
		e, ok := want[cleanAbs(h.Name)]
		if !ok || e.loaded || h.Typeflag != tar.TypeReg {
			continue
		}
		if e.data, err = io.ReadAll(tr); err != nil {
			return fmt.Errorf("reading layer: %w", err)
		}
		e.loaded = true
		left--
	}
	if left > 0 {
		return errors.New("reading layer: files listed in its index are missing")
	}
	return nil
}
