//go:build unix

package verify

import (
	"bytes"
	"os"
	"sync"
	"syscall"
)

// readFile reads a whole regular file with three system calls (open, read,
// close) where os.ReadFile makes five or six: the fleet has many small
// files. Only regular files are read this way. The content is read into a
// reused buffer and kept in an allocation of its own size: the whole fleet
// stays in memory for the run, and a buffer per file rounded up to a page
// would more than triple it.
func readFile(name string) ([]byte, error) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	scratch := readBufs.Get().(*[]byte)
	defer readBufs.Put(scratch)
	buf := (*scratch)[:0]
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || len(buf) < cap(buf) {
			// A short read of a regular file is its end.
			if cap(buf) <= maxReadBuf {
				*scratch = buf[:0]
			}
			return bytes.Clone(buf), nil
		}
		buf = append(buf, 0)[:len(buf)]
	}
}

// maxReadBuf bounds the buffer kept for reuse after reading a large file.
const maxReadBuf = 1 << 20

var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}
