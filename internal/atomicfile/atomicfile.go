package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// DefaultMode is the mode of a file written without the Mode option.
const DefaultMode fs.FileMode = 0o644

type options struct {
	mode     fs.FileMode
	keepMode bool
	noSync   bool
}

// Option changes how a file is written.
type Option func(*options)

// Mode sets the permission bits of the file (default DefaultMode).
func Mode(perm fs.FileMode) Option { return func(o *options) { o.mode = perm.Perm() } }

// KeepMode keeps the permission bits of the file being replaced; a new
// file gets the default mode (or Mode's).
func KeepMode() Option { return func(o *options) { o.keepMode = true } }

// NoSync skips the fsync before the rename. The rename is still atomic for
// readers, but after a power loss the file may be empty: use it only for
// files that can be written again from elsewhere (a Git work tree, whose
// content is in the object store), where one sync per file costs more than
// the work itself.
func NoSync() Option { return func(o *options) { o.noSync = true } }

// Write writes data to the file name atomically.
func Write(name string, data []byte, opts ...Option) error {
	return WriteFunc(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, opts...)
}

// WriteFunc writes the file name atomically with the content write writes
// to w (the temporary file, unbuffered). An error from write fails the
// whole write and leaves the file as it was.
func WriteFunc(name string, write func(w io.Writer) error, opts ...Option) error {
	o := options{mode: DefaultMode}
	for _, opt := range opts {
		opt(&o)
	}
	if o.keepMode {
		if fi, err := os.Stat(name); err == nil {
			o.mode = fi.Mode().Perm()
		}
	}
	if err := write1(name, write, o); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

func write1(name string, write func(w io.Writer) error, o options) (err error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The temporary file is hidden and named after its target, short
	// enough for any file system's name limit.
	pattern := "." + base + ".tmp-*"
	if len(pattern) > 200 {
		pattern = ".atomicfile.tmp-*"
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(o.mode); err != nil {
		return err
	}
	if !o.noSync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
