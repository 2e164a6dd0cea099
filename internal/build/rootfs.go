package build

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// rootFS is a stage's filesystem unpacked in a directory, where RUN
// executes. applied counts the layers of the stage unpacked into it; sums
// holds the SHA-256 of each regular file as the last snapshot saw it, so a
// file rewritten with the same content does not count as changed.
type rootFS struct {
	dir     string
	root    *os.Root
	applied int
	sums    map[string][32]byte
	ids     idMap     // how the RUN's user namespace maps the owners of files
	epoch   time.Time // mtime of files unpacked from this build's own layers
}

// newRootFS makes dir, owned by the user namespace's root.
func newRootFS(dir string, ids idMap, epoch time.Time) (*rootFS, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if !ids.rootless {
		if err := os.Lchown(dir, ids.toHost(0, false), ids.toHost(0, true)); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &rootFS{dir: dir, root: r, sums: map[string][32]byte{}, ids: ids, epoch: epoch}, nil
}

// chownRoot gives name (made by the builder) to the user namespace's root.
func (r *rootFS) chownRoot(name string) error {
	if r.ids.rootless {
		return nil
	}
	return r.root.Lchown(relName(name), r.ids.toHost(0, false), r.ids.toHost(0, true))
}

func (r *rootFS) close() { r.root.Close() }

// relName turns "/a/b" into the os.Root name "a/b" ("." for the root).
func relName(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

// resolve follows the symbolic links along p inside the root filesystem,
// an absolute link leading from the root, as the image's processes see
// it (and the last component's link too when followLast). From the first
// component that does not exist on, p is kept as it is. os.Root refuses
// absolute links, so every operation takes a path resolved here.
func (r *rootFS) resolve(p string, followLast bool) (string, error) {
	comps := splitPath(p)
	cur := "/"
	for hops, i := 0, 0; i < len(comps); i++ {
		next := path.Join(cur, comps[i])
		fi, err := r.root.Lstat(relName(next))
		if errors.Is(err, fs.ErrNotExist) {
			return path.Join(append([]string{next}, comps[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 || (i == len(comps)-1 && !followLast) {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := r.root.Readlink(relName(next))
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		comps = append(splitPath(target), comps[i+1:]...)
		i = -1
	}
	return cur, nil
}

// readFile reads a file of the root filesystem, following links inside it.
func (r *rootFS) readFile(p string) ([]byte, bool, error) {
	rp, err := r.resolve(p, true)
	if err != nil {
		return nil, false, err
	}
	b, err := r.root.ReadFile(relName(rp))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// extract unpacks an uncompressed layer stream into the root filesystem,
// applying its whiteouts to what lies below. Paths and links are resolved
// inside the root. Devices and pipes are skipped.
func (r *rootFS) extract(rd io.Reader) error {
	x := &extraction{r: r, tr: tar.NewReader(rd), created: map[string]bool{}, parents: map[string]string{}}
	for {
		h, err := x.tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading layer: %w", err)
		}
		if err := x.entry(h); err != nil {
			return err
		}
	}
	// Directories last, deepest first: their children changed their times.
	for i := len(x.dirs) - 1; i >= 0; i-- {
		if err := r.root.Chtimes(x.dirs[i].name, x.dirs[i].t, x.dirs[i].t); err != nil {
			return fmt.Errorf("unpacking %s: %w", x.dirs[i].name, err)
		}
	}
	return nil
}

// extraction is one layer being unpacked by extract.
type extraction struct {
	r  *rootFS
	tr *tar.Reader
	// created holds the paths this layer made: a whiteout later in the
	// layer does not remove them.
	created map[string]bool
	// dirs are the folders of the layer with their times, set last.
	dirs []dirTime
	// parents maps a folder named in this layer to the folder it resolves
	// to, made: most entries share theirs. Only removing or replacing an
	// entry can change what a made folder resolves to; that forgets them.
	parents map[string]string
}

// dirTime is a folder's modification time, set after its contents.
type dirTime struct {
	name string
	t    time.Time
}

// entry unpacks the layer's entry h: a whiteout removes what lies below,
// anything else replaces it (but a folder, which is kept), in its folder
// as resolved in the root.
func (x *extraction) entry(h *tar.Header) error {
	r := x.r
	name := cleanAbs(h.Name)
	if name == "/" {
		return nil
	}
	rawDir, base := path.Split(name)
	rawDir = path.Clean(rawDir)
	dir, known := x.parents[rawDir]
	if !known {
		var err error
		if dir, err = r.resolve(rawDir, true); err != nil {
			return fmt.Errorf("unpacking %s: %w", h.Name, err)
		}
	}
	name = path.Join(dir, base)
	if base == whiteoutOpaque {
		clear(x.parents)
		return r.clearDir(dir, x.created)
	}
	if strings.HasPrefix(base, whiteoutPrefix) {
		clear(x.parents)
		target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
		if !x.created[target] {
			return r.remove(target)
		}
		return nil
	}
	rel := relName(name)
	if dir != "/" && !known {
		if err := r.root.MkdirAll(relName(dir), 0o755); err != nil {
			return fmt.Errorf("unpacking %s: %w", name, err)
		}
		x.parents[rawDir] = dir
	}
	old, lerr := r.root.Lstat(rel)
	if lerr == nil && !(old.IsDir() && h.Typeflag == tar.TypeDir) {
		clear(x.parents)
		if err := r.remove(name); err != nil {
			return err
		}
		lerr = fs.ErrNotExist
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if lerr != nil {
			if err := r.root.Mkdir(rel, 0o700); err != nil {
				return fmt.Errorf("unpacking %s: %w", name, err)
			}
		}
		x.dirs = append(x.dirs, dirTime{rel, h.ModTime})
	case tar.TypeReg:
		return x.regular(h, name, rel)
	case tar.TypeSymlink, tar.TypeLink:
		if err := x.link(h, name, rel); err != nil {
			return err
		}
	default:
		return nil
	}
	x.created[name] = true
	if err := r.root.Lchown(rel, r.ids.toHost(h.Uid, false), r.ids.toHost(h.Gid, true)); err != nil && !r.ids.rootless {
		return fmt.Errorf("unpacking %s: %w", name, err)
	}
	if h.Typeflag == tar.TypeSymlink {
		return nil
	}
	if err := r.root.Chmod(rel, fileMode(h)&^fs.ModeType); err != nil {
		return fmt.Errorf("unpacking %s: %w", name, err)
	}
	return nil
}

// regular writes the regular file h, the layer's current entry, at name
// (rel from the root), with its owner, mode and time, and records its
// checksum.
func (x *extraction) regular(h *tar.Header, name, rel string) error {
	r := x.r
	f, err := r.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("unpacking %s: %w", name, err)
	}
	sum := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, sum), x.tr)
	// Owner, then mode (a change of owner clears set-id bits), on
	// the open file rather than by name again.
	if err == nil {
		if err = f.Chown(r.ids.toHost(h.Uid, false), r.ids.toHost(h.Gid, true)); err != nil && r.ids.rootless {
			err = nil
		}
	}
	if err == nil {
		err = f.Chmod(fileMode(h) &^ fs.ModeType)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unpacking %s: %w", name, err)
	}
	r.sums[name] = [32]byte(sum.Sum(nil))
	x.created[name] = true
	if err := r.root.Chtimes(rel, h.ModTime, h.ModTime); err != nil {
		return fmt.Errorf("unpacking %s: %w", name, err)
	}
	return nil
}

// link makes the symbolic or hard link h at name (rel from the root); a
// hard link's target is resolved inside the root, and shares its
// checksum.
func (x *extraction) link(h *tar.Header, name, rel string) error {
	r := x.r
	if h.Typeflag == tar.TypeSymlink {
		if err := r.root.Symlink(h.Linkname, rel); err != nil {
			return fmt.Errorf("unpacking %s: %w", name, err)
		}
		return nil
	}
	target, err := r.resolve(cleanAbs(h.Linkname), false)
	if err != nil {
		return fmt.Errorf("unpacking %s: hard link to %s: %w", name, h.Linkname, err)
	}
	if err := r.root.Link(relName(target), rel); err != nil {
		return fmt.Errorf("unpacking %s: hard link to %s: %w", name, target, err)
	}
	if s, ok := r.sums[target]; ok {
		r.sums[name] = s
	}
	return nil
}

// remove deletes p and everything below it, and forgets their sums.
func (r *rootFS) remove(p string) error {
	if err := r.root.RemoveAll(relName(p)); err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	delete(r.sums, p)
	prefix := strings.TrimSuffix(p, "/") + "/"
	for k := range r.sums {
		if strings.HasPrefix(k, prefix) {
			delete(r.sums, k)
		}
	}
	return nil
}

// clearDir removes what dir holds, except entries the current layer made.
func (r *rootFS) clearDir(dir string, keep map[string]bool) error {
	f, err := r.root.Open(relName(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opaque directory %s: %w", dir, err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("opaque directory %s: %w", dir, err)
	}
	for _, n := range names {
		p := path.Join(dir, n)
		if !keep[p] {
			if err := r.remove(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapEntry is what a snapshot records of one path.
type snapEntry struct {
	mode       fs.FileMode
	uid, gid   uint32
	size       int64
	ino        uint64
	nlink      uint64
	mtime      int64 // nanoseconds
	ctime      int64
	rdev       uint64
	link       string
	isDirEntry bool
}

// snapshot lists the tree below dir by path ("/a/b"), without following
// links. Owners are the container's, as the RUN's user namespace shows
// them (ids maps them back from the host's).
func snapshot(dir string, ids idMap) (map[string]snapEntry, error) {
	out := map[string]snapEntry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e, err := statEntry(fi)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		e.uid, e.gid = ids.fromHost(e.uid, false), ids.fromHost(e.gid, true)
		if fi.Mode()&fs.ModeSymlink != 0 {
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		out["/"+filepath.ToSlash(rel)] = e
		return nil
	})
	return out, err
}

// sameStat reports whether nothing about a path changed that the kernel
// tracks: same inode, size, times, mode and owner.
func sameStat(a, b snapEntry) bool {
	return a.ino == b.ino && a.size == b.size && a.mtime == b.mtime && a.ctime == b.ctime &&
		a.mode == b.mode && a.uid == b.uid && a.gid == b.gid && a.rdev == b.rdev && a.link == b.link
}

// diffKind says what a layer entry of a diff is.
type diffKind int

const (
	diffAdd      diffKind = iota // the path as it is after
	diffWhiteout                 // .wh.<name>: the path is gone
	diffOpaque                   // .wh..wh..opq: nothing below stays
)

// diffEntry is one entry of a RUN's layer.
type diffEntry struct {
	path string // absolute; for whiteouts the path that is gone, for opaque markers the directory
	kind diffKind
	st   snapEntry
}

// tarName is the entry's name in the layer.
func (d diffEntry) tarName() string {
	switch d.kind {
	case diffWhiteout:
		dir, base := path.Split(d.path)
		return path.Join(dir, whiteoutPrefix+base)
	case diffOpaque:
		return path.Join(d.path, whiteoutOpaque)
	}
	return d.path
}

// diffTrees compares two snapshots of one tree and returns the entries of
// the layer that turns before into after, sorted by their names in the
// layer. A regular file whose inode changed but whose content, mode and
// owner are what they were (sumOf says, against sums) is not an entry; nor
// is a directory whose mode and owner are unchanged. A directory that kept
// none of at least two earlier entries is marked opaque instead of
// whiting each one out.
func diffTrees(before, after map[string]snapEntry, sums map[string][32]byte, sumOf func(p string) ([32]byte, error)) ([]diffEntry, error) {
	opaque := opaqueDirs(before, after)
	var out []diffEntry
	for d := range opaque {
		out = append(out, diffEntry{path: d, kind: diffOpaque})
		if d != "/" {
			out = append(out, diffEntry{path: d, kind: diffAdd, st: after[d]})
		}
	}
	for p, a := range after {
		if opaque[p] {
			continue
		}
		b, inBefore := before[p]
		emit := !inBefore || underOpaque(opaque, p)
		if !emit {
			if a.mode.Type() != b.mode.Type() && b.mode.IsDir() {
				out = append(out, diffEntry{path: p, kind: diffWhiteout})
			}
			var err error
			if emit, err = entryChanged(p, a, b, sums, sumOf); err != nil {
				return nil, err
			}
		}
		if emit {
			out = append(out, diffEntry{path: p, kind: diffAdd, st: a})
		}
	}
	for p := range before {
		if _, ok := after[p]; ok {
			continue
		}
		parent := path.Dir(p)
		pa, ok := after[parent]
		if parent == "/" {
			ok, pa = true, snapEntry{mode: fs.ModeDir}
		}
		if !ok || !pa.mode.IsDir() || underOpaque(opaque, p) {
			continue
		}
		if pb, ok := before[parent]; parent != "/" && (!ok || !pb.mode.IsDir()) {
			continue
		}
		out = append(out, diffEntry{path: p, kind: diffWhiteout})
	}
	slices.SortFunc(out, func(a, b diffEntry) int { return strings.Compare(a.tarName(), b.tarName()) })
	return out, nil
}

// opaqueDirs returns the directories, in after, that kept none of at least
// two entries they held in before.
func opaqueDirs(before, after map[string]snapEntry) map[string]bool {
	bKids := map[string][]string{}
	for p := range before {
		bKids[path.Dir(p)] = append(bKids[path.Dir(p)], p)
	}
	opaque := map[string]bool{}
	for d, kids := range bKids {
		a, ok := after[d]
		if d == "/" {
			a, ok = snapEntry{mode: fs.ModeDir}, true
		}
		if !ok || !a.mode.IsDir() || len(kids) < 2 {
			continue
		}
		kept := false
		for _, k := range kids {
			if _, ok := after[k]; ok {
				kept = true
				break
			}
		}
		if !kept {
			opaque[d] = true
		}
	}
	return opaque
}

// underOpaque reports whether p lies in one of the opaque directories.
func underOpaque(opaque map[string]bool, p string) bool {
	for d := path.Dir(p); ; d = path.Dir(d) {
		if opaque[d] {
			return true
		}
		if d == "/" {
			return false
		}
	}
}

// entryChanged reports whether p, a in after and b in before, changed:
// its type, mode or owner; for a regular file whose inode changed, its
// content (by size, then by sumOf against its sum in sums); for a link or
// device, its target or number. A directory changes with its mode and
// owner only.
func entryChanged(p string, a, b snapEntry, sums map[string][32]byte, sumOf func(p string) ([32]byte, error)) (bool, error) {
	switch {
	case a.mode.Type() != b.mode.Type(), a.mode != b.mode, a.uid != b.uid, a.gid != b.gid:
		return true, nil
	case a.mode.IsDir():
		return false, nil
	case a.mode.IsRegular():
		if sameStat(a, b) {
			return false, nil
		}
		old, ok := sums[p]
		if !ok || a.size != b.size {
			return true, nil
		}
		sum, err := sumOf(p)
		if err != nil {
			return false, err
		}
		return sum != old, nil
	default:
		return a.link != b.link || a.rdev != b.rdev, nil
	}
}

// writeDiff writes the entries as a gzip-compressed layer file at dst,
// reading contents from the root filesystem. Every entry has mtime epoch;
// a file with several links in the layer is stored once and linked. It
// returns the layer and the SHA-256 of every regular file written.
//
// scan, when set, is searched for secrets in every entry's name, link
// target and content; a hit is a *leakError and no layer.
func (r *rootFS) writeDiff(entries []diffEntry, epoch time.Time, mt types.MediaType, dst string, scan *leakScanner) (*fileLayer, map[string][32]byte, error) {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	gzSum := sha256.New()
	counter := &countWriter{}
	zw, err := gzip.NewWriterLevel(io.MultiWriter(f, gzSum, counter), gzip.BestSpeed)
	if err != nil {
		return nil, nil, err
	}
	rawSum := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(zw, rawSum))
	sums := map[string][32]byte{}
	linkedTo := map[uint64]string{} // inode -> first path written
	for _, e := range entries {
		name := strings.TrimPrefix(e.tarName(), "/")
		h := &tar.Header{Name: name, ModTime: epoch, Format: tar.FormatPAX}
		if e.kind != diffAdd {
			h.Typeflag = tar.TypeReg
			if err := tw.WriteHeader(h); err != nil {
				return nil, nil, err
			}
			continue
		}
		st := e.st
		if scan != nil {
			if i := scan.check(e.path + "\x00" + st.link); i >= 0 {
				return nil, nil, &leakError{id: scan.ids[i], path: e.path}
			}
		}
		if !addedHeader(h, e, linkedTo, sums) {
			continue // sockets
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		sum, err := r.writeContent(tw, e, scan)
		if err != nil {
			return nil, nil, err
		}
		sums[e.path] = sum
		if st.nlink > 1 {
			linkedTo[st.ino] = e.path
		}
	}
	if err := tw.Close(); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	if err := f.Close(); err != nil {
		return nil, nil, err
	}
	return &fileLayer{
		path:      dst,
		digest:    hashOf(gzSum),
		diffID:    hashOf(rawSum),
		size:      counter.n,
		mediaType: mt,
	}, sums, nil
}

// addedHeader completes h, the tar header of the added entry e, with its
// type, mode, owner and what its type needs. A regular file that is a
// further link to an inode written already (linkedTo, by inode) becomes a
// hard link to it, with its sum in sums. It reports false for a socket,
// which a layer does not hold.
func addedHeader(h *tar.Header, e diffEntry, linkedTo map[uint64]string, sums map[string][32]byte) bool {
	st := e.st
	h.Mode, h.Uid, h.Gid = tarMode(st.mode), int(st.uid), int(st.gid)
	switch {
	case st.mode.IsDir():
		h.Typeflag = tar.TypeDir
		h.Name += "/"
	case st.mode&fs.ModeSymlink != 0:
		h.Typeflag, h.Linkname = tar.TypeSymlink, st.link
	case st.mode.IsRegular():
		if first, ok := linkedTo[st.ino]; ok && st.nlink > 1 {
			h.Typeflag, h.Linkname = tar.TypeLink, strings.TrimPrefix(first, "/")
			sums[e.path] = sums[first]
			break
		}
		h.Typeflag, h.Size = tar.TypeReg, st.size
	case st.mode&fs.ModeNamedPipe != 0:
		h.Typeflag = tar.TypeFifo
	case st.mode&fs.ModeDevice != 0:
		h.Typeflag = tar.TypeBlock
		if st.mode&fs.ModeCharDevice != 0 {
			h.Typeflag = tar.TypeChar
		}
		h.Devmajor, h.Devminor = int64(devMajor(st.rdev)), int64(devMinor(st.rdev))
	default:
		return false
	}
	return true
}

// writeContent copies the content of the regular file e from the root
// filesystem to w, searched for secrets by scan when set, and returns its
// SHA-256. A file whose size is not the snapshot's is an error.
func (r *rootFS) writeContent(w io.Writer, e diffEntry, scan *leakScanner) ([32]byte, error) {
	src, err := r.root.Open(relName(e.path))
	if err != nil {
		return [32]byte{}, err
	}
	sum := sha256.New()
	dst := io.MultiWriter(w, sum)
	if scan != nil {
		scan.reset()
		dst = io.MultiWriter(w, sum, scan)
	}
	n, err := io.Copy(dst, io.LimitReader(src, e.st.size))
	src.Close()
	if scan != nil && scan.hit >= 0 {
		return [32]byte{}, &leakError{id: scan.ids[scan.hit], path: e.path}
	}
	if err == nil && n != e.st.size {
		err = fmt.Errorf("%s changed size while it was read", e.path)
	}
	if err != nil {
		return [32]byte{}, err
	}
	return [32]byte(sum.Sum(nil)), nil
}

func devMajor(dev uint64) uint64 { return ((dev >> 8) & 0xfff) | ((dev >> 32) & ^uint64(0xfff)) }
func devMinor(dev uint64) uint64 { return (dev & 0xff) | ((dev >> 12) & ^uint64(0xff)) }

func hashOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// fileLayer is a gzip-compressed layer in a file of the build's work
// directory.
type fileLayer struct {
	path      string
	digest    v1.Hash
	diffID    v1.Hash
	size      int64
	mediaType types.MediaType
}

func (l *fileLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *fileLayer) Size() (int64, error)                { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error) { return l.mediaType, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }

func (l *fileLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return readCloser{zr, f}, nil
}

type readCloser struct {
	io.Reader
	f *os.File
}

func (r readCloser) Close() error { return r.f.Close() }

// sumFile hashes a regular file of the root filesystem.
func (r *rootFS) sumFile(p string) ([32]byte, error) {
	f, err := r.root.Open(relName(p))
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, err
	}
	return [32]byte(h.Sum(nil)), nil
}
