package build

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// buildContext is the set of files a build may read: the context directory
// less what .dockerignore excludes.
type buildContext struct {
	root    string // Request.Root, symbolic links resolved
	dir     string // the context directory, symbolic links resolved
	display string // the Dockerfile's path as shown in messages
	// dockerfile holds the Dockerfile's bytes (nil in buildpack mode).
	dockerfile []byte
	files      []ctxFile // sorted by rel
	index      map[string]int
	fsys       *os.Root // the context directory, for reading
}

// ctxFile is one entry of the context.
type ctxFile struct {
	rel  string // slash-separated, relative to the context, never "."
	mode fs.FileMode
	size int64
	link string // target of a symbolic link
}

// within reports whether p is root or below it. Both must be clean.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveInside resolves p's symbolic links and checks that the result stays
// inside root (already resolved).
func resolveInside(root, p, what string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if !within(root, real) {
		return "", fmt.Errorf("%s %s %w %s", what, p, ErrOutsideRoot, root)
	}
	return real, nil
}

// paths are a request's directories and Dockerfile, checked to lie inside
// its root.
type paths struct {
	root       string // Request.Root, symbolic links resolved
	dir        string // the context directory, symbolic links resolved
	dockerfile string // the Dockerfile as named (links not resolved), "" in buildpack mode
	real       string // the Dockerfile, links resolved
	display    string // the Dockerfile as shown in messages
}

// resolvePaths resolves and checks the request's context and Dockerfile.
func resolvePaths(req Request) (paths, error) {
	var ps paths
	root, err := filepath.EvalSymlinks(req.Root)
	if err != nil {
		return ps, fmt.Errorf("build root: %w", err)
	}
	given := filepath.Clean(req.Root)
	ctxPath := req.Context
	if !filepath.IsAbs(ctxPath) {
		ctxPath = filepath.Join(req.Root, ctxPath)
	}
	ctxPath = filepath.Clean(ctxPath)
	if !within(given, ctxPath) {
		return ps, fmt.Errorf("build context %s %w %s", ctxPath, ErrOutsideRoot, given)
	}
	dir, err := resolveInside(root, ctxPath, "build context")
	if err != nil {
		return ps, err
	}
	if fi, err := os.Stat(dir); err != nil {
		return ps, fmt.Errorf("build context: %w", err)
	} else if !fi.IsDir() {
		return ps, fmt.Errorf("build context %s is not a directory", ctxPath)
	}
	ps.root, ps.dir = root, dir
	if req.Mode != ModeDockerfile {
		return ps, nil
	}
	dfPath := req.Dockerfile
	if !filepath.IsAbs(dfPath) {
		dfPath = filepath.Join(ctxPath, dfPath)
	}
	ps.dockerfile = filepath.Clean(dfPath)
	ps.display = displayPath(req.Root, ps.dockerfile)
	if !within(given, ps.dockerfile) {
		return ps, fmt.Errorf("Dockerfile %s %w %s", ps.dockerfile, ErrOutsideRoot, given)
	}
	if ps.real, err = resolveInside(root, ps.dockerfile, "Dockerfile"); err != nil {
		return ps, err
	}
	return ps, nil
}

// openContext resolves and checks the request's paths, reads the Dockerfile
// and the ignore file, and lists the context.
func openContext(req Request) (*buildContext, error) {
	ps, err := resolvePaths(req)
	if err != nil {
		return nil, err
	}
	bc := &buildContext{root: ps.root, dir: ps.dir, display: ps.display}
	var ignorePatterns []string
	if req.Mode == ModeDockerfile {
		if bc.dockerfile, err = os.ReadFile(ps.real); err != nil {
			return nil, fmt.Errorf("reading Dockerfile: %w", err)
		}
		// A Dockerfile-specific ignore file wins over the context's.
		ignorePatterns, err = readIgnoreFile(ps.root, ps.dockerfile+".dockerignore")
		if errors.Is(err, fs.ErrNotExist) {
			ignorePatterns, err = readIgnoreFile(ps.root, filepath.Join(ps.dir, ".dockerignore"))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	ign, err := newIgnorer(ignorePatterns)
	if err != nil {
		return nil, fmt.Errorf(".dockerignore: %w", err)
	}
	if err := bc.walk(ign); err != nil {
		return nil, err
	}
	if bc.fsys, err = os.OpenRoot(ps.dir); err != nil {
		return nil, fmt.Errorf("build context: %w", err)
	}
	return bc, nil
}

// Close releases the context directory.
func (bc *buildContext) Close() error { return bc.fsys.Close() }

// displayPath shows p relative to root when it is inside, else as is.
func displayPath(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(p)
}

func readIgnoreFile(root, p string) ([]string, error) {
	if _, err := os.Lstat(p); err != nil {
		return nil, err
	}
	real, err := resolveInside(root, p, "ignore file")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return patterns, nil
}

// ignorer applies .dockerignore patterns with Docker's semantics: a path is
// excluded when it or a parent directory matches, later patterns win, and
// "!" patterns re-include.
type ignorer struct {
	pm      *patternmatcher.PatternMatcher // nil: nothing is ignored
	infos   map[string]patternmatcher.MatchInfo
	reinclu [][]string // "!" patterns split into components
}

func newIgnorer(patterns []string) (*ignorer, error) {
	if len(patterns) == 0 {
		return &ignorer{}, nil
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		return nil, err
	}
	ig := &ignorer{pm: pm, infos: map[string]patternmatcher.MatchInfo{}}
	for _, p := range pm.Patterns() {
		if p.Exclusion() {
			ig.reinclu = append(ig.reinclu, strings.Split(p.String(), "/"))
		}
	}
	return ig, nil
}

// excluded reports whether rel (slash-separated) is ignored. Parents must be
// asked before their children.
func (ig *ignorer) excluded(rel string, isDir bool) (bool, error) {
	if ig.pm == nil {
		return false, nil
	}
	parent := ig.infos[path.Dir(rel)]
	m, info, err := ig.pm.MatchesUsingParentResults(filepath.FromSlash(rel), parent)
	if err != nil {
		return false, err
	}
	if isDir {
		ig.infos[rel] = info
	}
	return m, nil
}

// mayReinclude reports whether some "!" pattern could match a path below
// the excluded directory dir, so that the walk must enter it.
func (ig *ignorer) mayReinclude(dir string) bool {
	comps := strings.Split(dir, "/")
	for _, pat := range ig.reinclu {
		if couldMatchBelow(pat, comps) {
			return true
		}
	}
	return false
}

func couldMatchBelow(pat, dir []string) bool {
	for i, d := range dir {
		if i >= len(pat) {
			return false
		}
		if strings.Contains(pat[i], "**") {
			return true
		}
		if ok, err := path.Match(pat[i], d); err != nil || !ok {
			return false
		}
	}
	return len(pat) > len(dir)
}

func (bc *buildContext) walk(ig *ignorer) error {
	err := filepath.WalkDir(bc.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == bc.dir {
			return nil
		}
		rel, err := filepath.Rel(bc.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		ex, err := ig.excluded(rel, d.IsDir())
		if err != nil {
			return fmt.Errorf(".dockerignore: %w", err)
		}
		if ex {
			if d.IsDir() && !ig.mayReinclude(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := ctxFile{rel: rel, mode: info.Mode()}
		switch {
		case info.Mode().IsRegular():
			f.size = info.Size()
		case info.Mode()&fs.ModeSymlink != 0:
			if f.link, err = os.Readlink(p); err != nil {
				return err
			}
		case info.IsDir():
		default:
			return nil // sockets, devices and pipes are not part of a context
		}
		bc.files = append(bc.files, f)
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading build context %s: %w", bc.dir, err)
	}
	slices.SortFunc(bc.files, func(a, b ctxFile) int { return strings.Compare(a.rel, b.rel) })
	bc.index = make(map[string]int, len(bc.files))
	for i, f := range bc.files {
		bc.index[f.rel] = i
	}
	return nil
}

// lookup returns the entry at rel ("" or "." is the context itself).
func (bc *buildContext) lookup(rel string) (ctxFile, bool) {
	if rel == "" || rel == "." {
		return ctxFile{rel: ".", mode: fs.ModeDir | 0o755}, true
	}
	i, ok := bc.index[rel]
	if !ok {
		return ctxFile{}, false
	}
	return bc.files[i], true
}

// below returns the entries under directory rel, sorted.
func (bc *buildContext) below(rel string) []ctxFile {
	if rel == "." || rel == "" {
		return bc.files
	}
	prefix := rel + "/"
	i, _ := slices.BinarySearchFunc(bc.files, prefix, func(f ctxFile, t string) int { return strings.Compare(f.rel, t) })
	j := i
	for j < len(bc.files) && strings.HasPrefix(bc.files[j].rel, prefix) {
		j++
	}
	return bc.files[i:j]
}

// readFile reads a regular file of the context.
func (bc *buildContext) readFile(rel string) ([]byte, error) {
	return bc.fsys.ReadFile(filepath.FromSlash(rel))
}

// followLink resolves the symbolic link at rel to the context entry it names.
// A link that leaves the context is refused.
func (bc *buildContext) followLink(rel string) (ctxFile, error) {
	real, err := resolveInside(bc.dir, filepath.Join(bc.dir, filepath.FromSlash(rel)), "COPY source")
	if err != nil {
		return ctxFile{}, err
	}
	target, err := filepath.Rel(bc.dir, real)
	if err != nil {
		return ctxFile{}, err
	}
	f, ok := bc.lookup(filepath.ToSlash(target))
	if !ok {
		return ctxFile{}, fmt.Errorf("%s: link target %s is not in the build context", rel, filepath.ToSlash(target))
	}
	return f, nil
}

// digestInputs writes the context's names, modes and contents to w in a
// canonical order.
func (bc *buildContext) digestInputs(w io.Writer) error {
	buf := make([]byte, 32<<10)
	for _, f := range bc.files {
		fmt.Fprintf(w, "file\x00%s\x00%o\x00%d\x00%s\x00", f.rel, uint32(f.mode), f.size, f.link)
		if !f.mode.IsRegular() {
			continue
		}
		// The walk saw a regular file here; plain open is twice as fast as
		// opening through the root, and what it reads only feeds the hash.
		// Content that goes into images is read through bc.fsys.
		fh, err := os.Open(filepath.Join(bc.dir, filepath.FromSlash(f.rel)))
		if err != nil {
			return fmt.Errorf("reading build context: %w", err)
		}
		// Hide the file's WriterTo, which would allocate a buffer per file.
		n, err := io.CopyBuffer(w, struct{ io.Reader }{fh}, buf)
		fh.Close()
		if err != nil {
			return fmt.Errorf("reading build context %s: %w", f.rel, err)
		}
		if n != f.size {
			return fmt.Errorf("build context file %s changed while reading", f.rel)
		}
	}
	return nil
}
