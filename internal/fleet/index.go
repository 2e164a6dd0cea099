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
	"sync"
	"syscall"
	"time"
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
// The index is a cache: it lives outside the fleet (never in Git), a
// missing, stale or corrupt one only makes Compute read files.
type Index struct {
	mu      sync.Mutex
	saved   int64 // when the loaded index was written (unix ns)
	entries map[string]indexEntry
	changed bool
}

type indexEntry struct {
	size, mtime, ctime int64
	ino                uint64
	sum                [sha256.Size]byte
}

// racyMargin is how much older than the index a file's change time must be
// for the index to vouch for it.
const racyMargin = int64(100 * time.Millisecond)

const indexMagic = "fleetwright-index 1\n"

// LoadIndex reads the index file; a missing or unreadable one gives an
// empty index.
func LoadIndex(file string) *Index {
	x := &Index{entries: map[string]indexEntry{}}
	data, err := os.ReadFile(file)
	if err != nil || !bytes.HasPrefix(data, []byte(indexMagic)) {
		return x
	}
	r := bytes.NewReader(data[len(indexMagic):])
	var saved int64
	var n uint32
	if binary.Read(r, binary.LittleEndian, &saved) != nil || binary.Read(r, binary.LittleEndian, &n) != nil {
		return x
	}
	if int64(n) > int64(r.Len())/(2+32+sha256.Size) {
		return x // more entries than the file can hold
	}
	entries := make(map[string]indexEntry, n)
	for range n {
		var plen uint16
		if binary.Read(r, binary.LittleEndian, &plen) != nil {
			return x
		}
		p := make([]byte, plen)
		if _, err := io.ReadFull(r, p); err != nil {
			return x
		}
		var e indexEntry
		var fixed [32]byte
		if _, err := io.ReadFull(r, fixed[:]); err != nil {
			return x
		}
		e.size = int64(binary.LittleEndian.Uint64(fixed[0:]))
		e.mtime = int64(binary.LittleEndian.Uint64(fixed[8:]))
		e.ctime = int64(binary.LittleEndian.Uint64(fixed[16:]))
		e.ino = binary.LittleEndian.Uint64(fixed[24:])
		if _, err := io.ReadFull(r, e.sum[:]); err != nil {
			return x
		}
		entries[string(p)] = e
	}
	x.saved, x.entries = saved, entries
	return x
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
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<16)
	w.WriteString(indexMagic)
	var head [12]byte
	binary.LittleEndian.PutUint64(head[0:], uint64(time.Now().UnixNano()))
	binary.LittleEndian.PutUint32(head[8:], uint32(len(x.entries)))
	w.Write(head[:])
	for p, e := range x.entries {
		if len(p) > 0xffff {
			continue
		}
		var rec [2 + 32]byte
		binary.LittleEndian.PutUint16(rec[0:], uint16(len(p)))
		binary.LittleEndian.PutUint64(rec[2:], uint64(e.size))
		binary.LittleEndian.PutUint64(rec[10:], uint64(e.mtime))
		binary.LittleEndian.PutUint64(rec[18:], uint64(e.ctime))
		binary.LittleEndian.PutUint64(rec[26:], e.ino)
		w.Write(rec[:2])
		w.WriteString(p)
		w.Write(rec[2:])
		w.Write(e.sum[:])
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	x.changed = false
	return nil
}

// statOf returns the entry fields of a file's stat data.
func statOf(fi fs.FileInfo) (indexEntry, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return indexEntry{}, false
	}
	return indexEntry{
		size:  fi.Size(),
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
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
	if !ok || e.size != st.size || e.mtime != st.mtime || e.ctime != st.ctime || e.ino != st.ino ||
		e.ctime >= saved-racyMargin || int64(len(want)) != e.size {
		return false
	}
	return sha256.Sum256(want) == e.sum
}

// record remembers that the file at p, with stat data st, holds data.
func (x *Index) record(p string, st indexEntry, data []byte) {
	st.sum = sha256.Sum256(data)
	x.mu.Lock()
	if old, ok := x.entries[p]; !ok || old != st || st.ctime >= x.saved-racyMargin {
		x.entries[p] = st
		x.changed = true
	}
	x.mu.Unlock()
}

// forget drops the entry of p.
func (x *Index) forget(p string) {
	x.mu.Lock()
	if _, ok := x.entries[p]; ok {
		delete(x.entries, p)
		x.changed = true
	}
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
