package gitrepo

import (
	"os"
	"path/filepath"
)

// FindTop returns the top of the Git work tree holding dir (the nearest
// folder at or above it with a .git folder or file) and dir's slash path
// inside it, "." for the top itself; ok is false outside any work tree.
func FindTop(dir string) (top, rel string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			r, err := filepath.Rel(d, abs)
			if err != nil {
				return "", "", false
			}
			return d, filepath.ToSlash(r), true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", false
		}
		d = parent
	}
}
