package load

import "io/fs"

// NewMemFSForTest exposes the in-memory file system to tests.
func NewMemFSForTest(files map[string][]byte) fs.FS { return newMemFS(files) }

// NewMemFSLinksForTest exposes the in-memory file system with links.
func NewMemFSLinksForTest(files map[string][]byte, links map[string]string) fs.FS {
	return newMemFSLinks(files, links)
}
