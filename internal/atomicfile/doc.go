// Package atomicfile writes files atomically: the content goes to a
// temporary file in the target's folder, is flushed to disk (fsync) and
// then renamed over the target, so a reader sees the old file or the new
// one, never a part of either, even after a crash. On any error the
// temporary file is removed and the target is left as it was.
//
// Files get mode 0644 unless an option says otherwise; missing parent
// folders are created with mode 0755.
//
// The fleet writer of package fleet does not use this package: it creates
// a hundred thousand files in one render and stages them with fewer system
// calls than a file each would take here.
package atomicfile
