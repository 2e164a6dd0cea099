package render

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/template"
)

// AtRelease is the apps repository as a promotion renders it: at the
// commit Ref, with the folder of each app in Folders (slash path of the
// folder of its spec, from the apps repository's root) as it was at the
// revision given, the way a rollback restores an app's folder.
type AtRelease struct {
	Repo    *GitRepo
	Ref     string
	Folders map[string]string // app folder → revision
}

// Root is the apps repository's root.
func (s *AtRelease) Root() string { return s.Repo.root }

// Load reads the repository at Ref and the apps' folders at their
// revisions.
func (s *AtRelease) Load(ctx context.Context, loader *load.Loader) (*load.Repo, load.Problems, error) {
	base := &gitSource{r: s.Repo, ref: s.Ref}
	files, modes, err := base.tree(ctx, append([]string{"apps", template.Dir}, load.PlatformFileNames...))
	if err != nil {
		return nil, nil, err
	}
	for _, dir := range slices.Sorted(maps.Keys(s.Folders)) {
		if dir == "" || dir == "." || path.Clean(dir) != dir || !strings.HasPrefix(dir, "apps/") {
			return nil, nil, fmt.Errorf("%q is not an app's folder", dir)
		}
		for p := range files {
			if strings.HasPrefix(p, dir+"/") {
				delete(files, p)
				delete(modes, p)
			}
		}
		then := &gitSource{r: s.Repo, ref: s.Folders[dir]}
		f, m, err := then.tree(ctx, []string{dir})
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(files, f)
		maps.Copy(modes, m)
	}
	repo, ps := loadTree(loader, files, modes)
	return repo, ps, nil
}

// Materialize writes the files of Ref into a temporary folder.
func (s *AtRelease) Materialize(ctx context.Context, paths []string) (string, func(), error) {
	return (&gitSource{r: s.Repo, ref: s.Ref}).Materialize(ctx, paths)
}

// Revisions are the spec commits at Ref.
func (s *AtRelease) Revisions(ctx context.Context, repo *load.Repo) (func(*load.LoadedApp) string, error) {
	return (&gitSource{r: s.Repo, ref: s.Ref}).Revisions(ctx, repo)
}

// Resolve returns the commit a ref names.
func (r *GitRepo) Resolve(ref string) (string, error) { return r.g.Resolve(ref) }

// LoadRelease loads the apps repository at root as AtRelease reads it; an
// invalid repository is an error.
func LoadRelease(ctx context.Context, root, ref string, folders map[string]string) (*load.Repo, error) {
	g, err := OpenGit(root)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	repo, ps, err := Load(ctx, &AtRelease{Repo: g, Ref: ref, Folders: folders})
	if err != nil {
		return nil, err
	}
	if ps.HasErrors() {
		return nil, fmt.Errorf("the apps repository at %s, with %s at their releases, is invalid:\n%w", ref, strings.Join(slices.Sorted(maps.Keys(folders)), ", "), ps.Err())
	}
	return repo, nil
}
