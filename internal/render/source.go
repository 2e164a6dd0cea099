package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	rev "github.com/fleetwright/fleetwright/internal/revision"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/template"
)

// A Source is the apps repository at one revision: a folder on disk (Dir)
// or a Git ref of the repository holding it (GitRepo.At).
type Source interface {
	// Root is the repository's folder as the user named it; problems name
	// files below it.
	Root() string
	// Load reads the platform file, the specs and the templates with
	// loader, which validates them and orders their components.
	Load(ctx context.Context, loader *load.Loader) (*load.Repo, load.Problems, error)
	// Materialize returns a folder on disk that holds, below the same
	// paths, the files at or under each of paths (slash paths relative to
	// Root) as a checkout makes them; done removes what it wrote.
	Materialize(ctx context.Context, paths []string) (dir string, done func(), err error)
	// Revisions returns the commit that last changed each app's spec, or
	// nil outside Git (see package revision).
	Revisions(ctx context.Context, repo *load.Repo) (func(*load.LoadedApp) string, error)
}

// Dir is the apps repository in the folder root, as it is on disk.
type Dir string

// Root returns the folder.
func (d Dir) Root() string { return string(d) }

// Load reads the folder.
func (d Dir) Load(_ context.Context, loader *load.Loader) (*load.Repo, load.Problems, error) {
	repo, ps := loader.Load(os.DirFS(string(d)))
	return repo, ps, nil
}

// Materialize returns the folder itself: its files are already on disk.
func (d Dir) Materialize(context.Context, []string) (string, func(), error) {
	abs, err := filepath.Abs(string(d))
	return abs, func() {}, err
}

// Revisions are the spec commits at HEAD of the Git work tree holding the
// folder.
func (d Dir) Revisions(ctx context.Context, repo *load.Repo) (func(*load.LoadedApp) string, error) {
	return rev.Specs(ctx, string(d), "HEAD", repo)
}

// NotGitError says a folder is in no Git work tree.
type NotGitError struct{ Dir string }

func (e *NotGitError) Error() string { return e.Dir + " is not inside a Git work tree" }

// GitRepo is the Git repository holding an apps repository; At gives the
// apps repository at one of its refs, read without touching the work tree.
type GitRepo struct {
	g    *gitrepo.Repo
	root string // as the user named it
	rel  string // its slash path in the work tree; "." at the top
}

// OpenGit opens the Git repository holding the apps repository at root;
// outside Git the error is a *NotGitError.
func OpenGit(root string) (*GitRepo, error) {
	top, rel, ok := gitrepo.FindTop(root)
	if !ok {
		return nil, &NotGitError{Dir: root}
	}
	g, err := gitrepo.Open(top)
	if err != nil {
		return nil, err
	}
	return &GitRepo{g: g, root: root, rel: rel}, nil
}

// Close releases the repository.
func (r *GitRepo) Close() error { return r.g.Close() }

// At is the apps repository at ref.
func (r *GitRepo) At(ref string) Source { return &gitSource{r: r, ref: ref} }

type gitSource struct {
	r   *GitRepo
	ref string
}

func (s *gitSource) Root() string { return s.r.root }

// full is p (relative to the apps repository) relative to the work tree,
// or false when p leaves the apps repository.
func (s *gitSource) full(p string) (string, bool) {
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return path.Join(s.r.rel, p), true
}

// tree reads the files at or under paths, keyed relative to the apps
// repository.
func (s *gitSource) tree(ctx context.Context, paths []string) (map[string][]byte, map[string]fs.FileMode, error) {
	var prefixes []string
	for _, p := range paths {
		if f, ok := s.full(p); ok {
			prefixes = append(prefixes, f)
		}
	}
	if len(prefixes) == 0 {
		return map[string][]byte{}, map[string]fs.FileMode{}, nil
	}
	files, modes, err := s.r.g.TreeModes(ctx, s.ref, prefixes...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s at %s: %w", s.r.root, s.ref, err)
	}
	if s.r.rel != "." && s.r.rel != "" {
		files, modes = stripPrefix(files, s.r.rel), stripPrefix(modes, s.r.rel)
	}
	return files, modes, nil
}

// Load reads what the loader reads, and only that: the platform file,
// apps/ and templates/.
func (s *gitSource) Load(ctx context.Context, loader *load.Loader) (*load.Repo, load.Problems, error) {
	paths := append([]string{"apps", template.Dir}, load.PlatformFileNames...)
	files, modes, err := s.tree(ctx, paths)
	if err != nil {
		return nil, nil, err
	}
	repo, ps := loadTree(loader, files, modes)
	return repo, ps, nil
}

// loadTree loads a tree read from Git. Links are followed and refused as
// on disk: a config file that is a link is read through it, not as the
// link's target text.
func loadTree(loader *load.Loader, files map[string][]byte, modes map[string]fs.FileMode) (*load.Repo, load.Problems) {
	var links map[string]string
	for p, m := range modes {
		if m&fs.ModeSymlink != 0 {
			if links == nil {
				links = map[string]string{}
			}
			links[p] = string(files[p])
			delete(files, p)
		}
	}
	return loader.LoadTree(files, links)
}

// Materialize writes the files into a temporary folder, executables and
// symbolic links as Git keeps them, under this process's umask.
func (s *gitSource) Materialize(ctx context.Context, paths []string) (string, func(), error) {
	files, modes, err := s.tree(ctx, paths)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "fleetwright-review-")
	if err != nil {
		return "", nil, err
	}
	done := func() { os.RemoveAll(dir) }
	if err := materialize(dir, files, modes); err != nil {
		done()
		return "", nil, err
	}
	return dir, done, nil
}

func (s *gitSource) Revisions(ctx context.Context, repo *load.Repo) (func(*load.LoadedApp) string, error) {
	return rev.Specs(ctx, s.r.root, s.ref, repo)
}

// materialize writes files below dir with the modes a checkout gives them.
func materialize(dir string, files map[string][]byte, modes map[string]fs.FileMode) error {
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		var err error
		switch m := modes[p]; {
		case m&fs.ModeSymlink != 0:
			err = os.Symlink(string(b), full)
		case m&0o111 != 0:
			err = os.WriteFile(full, b, 0o777)
		default:
			err = os.WriteFile(full, b, 0o666)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stripPrefix returns m with the folder prefix taken off its keys.
func stripPrefix[V any](m map[string]V, prefix string) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[strings.TrimPrefix(k, prefix+"/")] = v
	}
	return out
}

// LoadAt loads the apps repository at root from the folder itself or, when
// ref is set, from that ref of the Git repository holding it.
func LoadAt(ctx context.Context, root, ref string) (*load.Repo, load.Problems, error) {
	if ref == "" {
		return Load(ctx, Dir(root))
	}
	g, err := OpenGit(root)
	if err != nil {
		return nil, nil, err
	}
	defer g.Close()
	return Load(ctx, g.At(ref))
}
