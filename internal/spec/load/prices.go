package load

import (
	"path"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// LoadPlatformFile reads a platform file alone, with every check Load makes
// of it, for a program that needs only the platform's settings (the
// webhook reads its prices). name is the file's name as problems show it;
// its base must be one of PlatformFileNames.
func (l *Loader) LoadPlatformFile(name string, data []byte) (*spec.Platform, Problems) {
	dir, base := path.Split(name)
	sub := &Loader{Exports: l.Exports, Prefix: path.Clean(path.Join(l.Prefix, dir)), schemas: l.schemas, checks: l.checks}
	repo, ps := sub.LoadFiles(map[string][]byte{base: data})
	return &repo.Platform, ps
}
