package fleet

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fleetwright/fleetwright/internal/atomicfile"
)

// Index remembers, for each file of a fleet folder that render last wrote
// or compared, its size, inode, modification and change times and the
// SHA-256 of its content, the way Git's index does for a work tree. With
// it, Compute knows an unchanged file from one stat instead of reading it.
//
// A file is trusted only when all of its stat data match and its change
// time is older than the index itself by more than a margin, so a file
// rewritten in the same clock tick as it was recorded is read again (Git's
// "racy clean" rule). The change time cannot be set back by a program, so
// a hand edit that restores the modification time is still seen.
//
// The index also remembers, for each app, a digest of what its files were
// generated from and the files that came of it (see RememberApps); InPlace
// then tells, from one stat per file, that an app whose digest has not
// changed needs no generating at all.
//
// The index is a cache: it lives outside the fleet (never in Git), a
// missing, stale or corrupt one only makes Compute read files.
type Index struct {
	mu      sync.Mutex
	saved   int64 // when the loaded index was written (unix ns)
	entries map[string]indexEntry
	apps    map[string]appRecord
	// What this run found in place: the files of apps that InPlace vouched
	// for, and those apps.
	kept   map[string]bool
	reused map[string]bool
	// seen holds the files this run found or put in place with the content
	// their entry records.
	seen map[string]bool
	// dirs holds, for managed folders whose listing held only wanted
	// files, the folder's stat data and that listing (see walker).
	dirs    map[string]dirRecord
	changed bool
}

type dirRecord struct {
	stat  indexEntry // size and sum unused
	files []string   // names of its regular files
	dirs  []string   // names of its folders
}

type indexEntry struct {
	size, mtime, ctime int64
	ino                uint64
	sum                [sha256.Size]byte
}

// sameStat reports whether e was recorded for a file with stat data st.
func (e indexEntry) sameStat(st indexEntry) bool {
	return e.size == st.size && e.mtime == st.mtime && e.ctime == st.ctime && e.ino == st.ino
}

// appRecord is what an app's files were generated from, and their content.
type appRecord struct {
	digest [sha256.Size]byte
	files  []appFile
}

type appFile struct {
	path string
	sum  [sha256.Size]byte
}

// AppFiles is what RememberApps records of one generated app.
type AppFiles struct {
	Digest [sha256.Size]byte
	Paths  []string
}

// racyMargin is how much older than the index a file's change time must be
// for the index to vouch for it.
const racyMargin = int64(100 * time.Millisecond)

const indexMagic = "fleetwright-index 2\n"

func newIndex() *Index {
	return &Index{entries: map[string]indexEntry{}, apps: map[string]appRecord{},
		kept: map[string]bool{}, reused: map[string]bool{}, seen: map[string]bool{}, dirs: map[string]dirRecord{}}
}

// LoadIndex reads the index file; a missing, unreadable or corrupt one
// gives an empty index.
func LoadIndex(file string) *Index {
	x := newIndex()
	data, err := os.ReadFile(file)
	if err != nil || !bytes.HasPrefix(data, []byte(indexMagic)) {
		return x
	}
	// One string for the whole file: every path is a slice of it.
	r := &indexReader{s: string(data[len(indexMagic):]), ok: true}
	saved := int64(r.u64())
	n := r.u32()
	if !r.ok || uint64(n) > uint64(len(r.s))/(2+32+sha256.Size) {
		return x // more entries than the file can hold
	}
	entries := make(map[string]indexEntry, n)
	for range n {
		p := r.str()
		var e indexEntry
		e.size = int64(r.u64())
		e.mtime = int64(r.u64())
		e.ctime = int64(r.u64())
		e.ino = r.u64()
		e.sum = r.sum()
		if !r.ok {
			return x
		}
		entries[p] = e
	}
	napps := r.u32()
	if !r.ok || uint64(napps) > uint64(len(r.s))/(2+sha256.Size+4) {
		return x
	}
	apps := make(map[string]appRecord, napps)
	for range napps {
		key := r.str()
		rec := appRecord{digest: r.sum()}
		nf := r.u32()
		if !r.ok || uint64(nf) > uint64(len(r.s))/(2+sha256.Size) {
			return x
		}
		rec.files = make([]appFile, nf)
		for i := range rec.files {
			rec.files[i] = appFile{path: r.str(), sum: r.sum()}
		}
		if !r.ok {
			return x
		}
		apps[key] = rec
	}
	ndirs := r.u32()
	if !r.ok || uint64(ndirs) > uint64(len(r.s))/(2+24+8) {
		return x
	}
	dirs := make(map[string]dirRecord, ndirs)
	for range ndirs {
		p := r.str()
		var rec dirRecord
		rec.stat.mtime = int64(r.u64())
		rec.stat.ctime = int64(r.u64())
		rec.stat.ino = r.u64()
		rec.files = r.names()
		rec.dirs = r.names()
		if !r.ok {
			return x
		}
		dirs[p] = rec
	}
	if !r.ok || len(r.s) != 0 {
		return x
	}
	x.saved, x.entries, x.apps, x.dirs = saved, entries, apps, dirs
	return x
}

func (r *indexReader) names() []string {
	n := r.u32()
	if !r.ok || uint64(n) > uint64(len(r.s))/2 {
		r.ok, r.s = false, ""
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// indexReader reads the little-endian fields of an index file; ok turns
// false, for good, at the first field that runs past the end.
type indexReader struct {
	s  string
	ok bool
}

func (r *indexReader) take(n int) string {
	if !r.ok || len(r.s) < n {
		r.ok, r.s = false, ""
		return ""
	}
	v := r.s[:n]
	r.s = r.s[n:]
	return v
}

func (r *indexReader) u64() uint64 {
	v := r.take(8)
	if len(v) < 8 {
		return 0
	}
	return binary.LittleEndian.Uint64([]byte(v))
}

func (r *indexReader) u32() uint32 {
	v := r.take(4)
	if len(v) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32([]byte(v))
}

func (r *indexReader) str() string {
	v := r.take(2)
	if len(v) < 2 {
		return ""
	}
	return r.take(int(binary.LittleEndian.Uint16([]byte(v))))
}

func (r *indexReader) sum() (s [sha256.Size]byte) {
	copy(s[:], r.take(sha256.Size))
	return s
}

// Save writes the index to file (through a temporary file and a rename)
// when it changed since it was loaded.
func (x *Index) Save(file string) error {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.changed {
		return nil
	}
	// The index is a cache that Load checks, so it needs no fsync; it has
	// always been private to its user.
	err := atomicfile.WriteFunc(file, x.write, atomicfile.Mode(0o600), atomicfile.NoSync())
	if err != nil {
		return err
	}
	x.changed = false
	return nil
}

// write writes the index in its file format to f.
func (x *Index) write(f io.Writer) error {
	w := bufio.NewWriterSize(f, 1<<16)
	w.WriteString(indexMagic)
	var num [8]byte
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(num[:], v); w.Write(num[:8]) }
	u32 := func(v uint32) { binary.LittleEndian.PutUint32(num[:], v); w.Write(num[:4]) }
	str := func(s string) {
		binary.LittleEndian.PutUint16(num[:], uint16(len(s)))
		w.Write(num[:2])
		w.WriteString(s)
	}
	u64(uint64(time.Now().UnixNano()))
	n := 0
	for p := range x.entries {
		if len(p) <= 0xffff {
			n++
		}
	}
	u32(uint32(n))
	for p, e := range x.entries {
		if len(p) > 0xffff {
			continue
		}
		str(p)
		u64(uint64(e.size))
		u64(uint64(e.mtime))
		u64(uint64(e.ctime))
		u64(e.ino)
		w.Write(e.sum[:])
	}
	n = 0
	for key, rec := range x.apps {
		if len(key) <= 0xffff && recordable(rec) {
			n++
		}
	}
	u32(uint32(n))
	for key, rec := range x.apps {
		if len(key) > 0xffff || !recordable(rec) {
			continue
		}
		str(key)
		w.Write(rec.digest[:])
		u32(uint32(len(rec.files)))
		for _, f := range rec.files {
			str(f.path)
			w.Write(f.sum[:])
		}
	}
	n = 0
	for p, rec := range x.dirs {
		if len(p) <= 0xffff && allShort(rec.files) && allShort(rec.dirs) {
			n++
		}
	}
	u32(uint32(n))
	for p, rec := range x.dirs {
		if len(p) > 0xffff || !allShort(rec.files) || !allShort(rec.dirs) {
			continue
		}
		str(p)
		u64(uint64(rec.stat.mtime))
		u64(uint64(rec.stat.ctime))
		u64(rec.stat.ino)
		for _, names := range [][]string{rec.files, rec.dirs} {
			u32(uint32(len(names)))
			for _, name := range names {
				str(name)
			}
		}
	}
	return w.Flush()
}

func allShort(names []string) bool {
	for _, n := range names {
		if len(n) > 0xffff {
			return false
		}
	}
	return true
}

func recordable(rec appRecord) bool {
	for _, f := range rec.files {
		if len(f.path) > 0xffff {
			return false
		}
	}
	return true
}

// InPlace reports whether the files that the app's record says were
// generated from digest d are all in root as recorded, from one stat each
// and without reading them. Their paths then count as unchanged in
// Compute, which must not be given them. A nil x knows nothing.
func (x *Index) InPlace(root, app string, d [sha256.Size]byte) bool {
	if x == nil {
		return false
	}
	x.mu.Lock()
	rec, ok := x.apps[app]
	saved := x.saved
	x.mu.Unlock()
	if !ok || rec.digest != d || len(rec.files) == 0 {
		return false
	}
	var small [16]indexEntry
	entries := small[:0]
	x.mu.Lock()
	for _, f := range rec.files {
		e, ok := x.entries[f.path]
		if !ok || e.sum != f.sum {
			x.mu.Unlock()
			return false
		}
		entries = append(entries, e)
	}
	x.mu.Unlock()
	prefix := filepath.Clean(root) + string(filepath.Separator)
	for i, f := range rec.files {
		e := entries[i]
		fi, err := os.Lstat(prefix + filepath.FromSlash(f.path))
		if err != nil {
			return false
		}
		st, ok := statOf(fi)
		if !ok || !e.sameStat(st) || e.ctime >= saved-racyMargin {
			return false
		}
	}
	x.mu.Lock()
	for _, f := range rec.files {
		x.kept[f.path] = true
	}
	x.reused[app] = true
	x.mu.Unlock()
	return true
}

// dirRecord returns the record of the folder at p.
func (x *Index) dirRecord(p string) (dirRecord, bool) {
	if x == nil {
		return dirRecord{}, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	rec, ok := x.dirs[p]
	return rec, ok
}

// trusted reports whether stat data recorded in the loaded index are older
// than it by more than the racy margin.
func (x *Index) trusted(st indexEntry) bool { return st.ctime < x.saved-racyMargin }

// setDirs replaces the folder records with those that held in this run.
func (x *Index) setDirs(dirs map[string]dirRecord) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	same := len(dirs) == len(x.dirs)
	for p, rec := range dirs {
		if !same {
			break
		}
		old, ok := x.dirs[p]
		same = ok && old.stat == rec.stat && slices.Equal(old.files, rec.files) && slices.Equal(old.dirs, rec.dirs)
	}
	if !same {
		x.dirs = dirs
		x.changed = true
	}
}

func (x *Index) isKept(p string) bool {
	if x == nil {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.kept[p]
}

func (x *Index) keptCount() int {
	if x == nil {
		return 0
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.kept)
}

// RememberApps ends a run: it records each app of apps, generated in this
// run, with its digest and files, when every one of its files was found or
// put in place by this run's Compute and Apply; it drops the record of any
// other app that InPlace did not vouch for in this run, and the entries of
// files this run neither found in place nor kept (files gone from the
// folder or no longer generated), so the index does not grow with them.
func (x *Index) RememberApps(apps map[string]AppFiles) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for p := range x.entries {
		if !x.seen[p] && !x.kept[p] {
			delete(x.entries, p)
			x.changed = true
		}
	}
	for key := range x.apps {
		if _, ok := apps[key]; !ok && !x.reused[key] {
			delete(x.apps, key)
			x.changed = true
		}
	}
	for key, af := range apps {
		rec := appRecord{digest: af.Digest, files: make([]appFile, len(af.Paths))}
		for i, p := range af.Paths {
			e, ok := x.entries[p]
			if !ok || !x.seen[p] {
				rec.files = nil
				break
			}
			rec.files[i] = appFile{path: p, sum: e.sum}
		}
		old, had := x.apps[key]
		switch {
		case rec.files == nil:
			if had {
				delete(x.apps, key)
				x.changed = true
			}
		case !had || !sameRecord(old, rec):
			x.apps[key] = rec
			x.changed = true
		}
	}
}

func sameRecord(a, b appRecord) bool {
	return a.digest == b.digest && slices.Equal(a.files, b.files)
}

// statOf returns the entry fields of a regular file's stat data.
func statOf(fi fs.FileInfo) (indexEntry, bool) {
	if !fi.Mode().IsRegular() {
		return indexEntry{}, false
	}
	return statData(fi)
}

// statData returns the entry fields of any file's stat data.
func statData(fi fs.FileInfo) (indexEntry, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return indexEntry{}, false
	}
	mtime, ctime := statTimes(st)
	return indexEntry{
		size:  fi.Size(),
		mtime: mtime,
		ctime: ctime,
		ino:   st.Ino,
	}, true
}

// unchanged reports whether the file at p (fleet-relative), whose stat
// data are st, surely holds want.
func (x *Index) unchanged(p string, st indexEntry, want []byte) bool {
	x.mu.Lock()
	e, ok := x.entries[p]
	saved := x.saved
	x.mu.Unlock()
	if !ok || !e.sameStat(st) || e.ctime >= saved-racyMargin || int64(len(want)) != e.size ||
		sha256.Sum256(want) != e.sum {
		return false
	}
	x.mu.Lock()
	x.seen[p] = true
	x.mu.Unlock()
	return true
}

// record remembers that the file at p, with stat data st, holds data.
func (x *Index) record(p string, st indexEntry, data []byte) {
	st.sum = sha256.Sum256(data)
	x.mu.Lock()
	if old, ok := x.entries[p]; !ok || old != st || st.ctime >= x.saved-racyMargin {
		x.entries[p] = st
		x.changed = true
	}
	x.seen[p] = true
	x.mu.Unlock()
}

// forget drops the entry of p.
func (x *Index) forget(p string) {
	x.mu.Lock()
	if _, ok := x.entries[p]; ok {
		delete(x.entries, p)
		x.changed = true
	}
	delete(x.seen, p)
	x.mu.Unlock()
}

// recordFile stats the file at root/p after it was written with data.
func (x *Index) recordFile(root, p string, data []byte) error {
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			x.forget(p)
			return nil
		}
		return fmt.Errorf("indexing %s: %w", p, err)
	}
	if st, ok := statOf(fi); ok {
		x.record(p, st, data)
	}
	return nil
}
