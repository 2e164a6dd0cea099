package spec

import "io/fs"

// NewMemFSForTest exposes the in-memory file system to tests.
func NewMemFSForTest(files map[string][]byte) fs.FS { return newMemFS(files) }
