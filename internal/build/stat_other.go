//go:build !linux

package build

import "io/fs"

// statEntry is Linux-only, as RUN is.
func statEntry(fs.FileInfo) (snapEntry, error) { return snapEntry{}, errNoSandbox }

func isTmpfs(string) bool { return false }
