package build

import (
	"errors"
	"io/fs"
	"syscall"
)

// statEntry is what a snapshot records of a file the walk found.
func statEntry(fi fs.FileInfo) (snapEntry, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return snapEntry{}, errors.New("no stat information")
	}
	return snapEntry{
		mode: fi.Mode(), uid: st.Uid, gid: st.Gid, size: st.Size, ino: st.Ino, nlink: uint64(st.Nlink),
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), rdev: uint64(st.Rdev),
	}, nil
}

// isTmpfs reports whether dir is on a tmpfs.
func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == 0x01021994 // TMPFS_MAGIC
}
