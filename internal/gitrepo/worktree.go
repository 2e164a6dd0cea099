package gitrepo

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/fleetwright/fleetwright/internal/atomicfile"
)

// WriteFiles edits the folder dir in place, without Git (no index, no
// commit), for changes left in a work tree for the user to commit: it
// removes the files and folders of remove, then writes files (slash paths
// relative to dir) in sorted order, each atomically through a temporary
// file and a rename. A rewritten file keeps its permissions; a new one is
// 0644.
func WriteFiles(dir string, files map[string][]byte, remove []string) error {
	for _, r := range remove {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(r))); err != nil {
			return err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		name := filepath.Join(dir, filepath.FromSlash(p))
		if err := atomicfile.Write(name, files[p], atomicfile.KeepMode()); err != nil {
			return err
		}
	}
	return nil
}
