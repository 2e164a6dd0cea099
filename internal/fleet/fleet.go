// Package fleet writes a generated fleet to a folder the way a careful
// person would: it compares bytes and rewrites only files that changed
// (each through a temporary file and an atomic rename), removes generated
// files that are no longer generated, and never touches files it did not
// generate. All new content is staged before the first rename, so a failure
// while writing leaves the tree as it was.
package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/fleetwright/fleetwright/internal/manifest"
)

// Op is what a change does to a file.
type Op string

// Operations.
const (
	Add    Op = "add"
	Update Op = "update"
	Delete Op = "delete"
)

// Change is one file that differs between the folder and the desired fleet.
type Change struct {
	Path     string // slash path relative to the fleet root
	Op       Op
	Old, New []byte
}

// Plan is what Apply would do.
type Plan struct {
	Changes []Change
	// Unmanaged lists files in managed folders that render did not generate
	// (no DO NOT EDIT header); they are left alone.
	Unmanaged []string
	Unchanged int
}

// Empty reports whether the folder already holds the desired fleet.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// Compute compares the folder root with desired (slash path → bytes).
// Generated files under the managed folders that are not desired are
// deleted.
func Compute(root string, desired map[string][]byte, managed []string) (*Plan, error) {
	paths := make([]string, 0, len(desired))
	for p := range desired {
		paths = append(paths, p)
	}
	slices.Sort(paths)

	type result struct {
		change *Change
		err    error
	}
	results := make([]result, len(paths))
	var wg sync.WaitGroup
	work := make(chan int, 256)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range work {
				p := paths[i]
				old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
				switch {
				case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
					results[i].change = &Change{Path: p, Op: Add, New: desired[p]}
				case err != nil:
					results[i].err = err
				case !bytes.Equal(old, desired[p]):
					results[i].change = &Change{Path: p, Op: Update, Old: old, New: desired[p]}
				}
			}
		})
	}
	for i := range paths {
		work <- i
	}
	close(work)
	wg.Wait()

	plan := &Plan{}
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		if r.change != nil {
			plan.Changes = append(plan.Changes, *r.change)
		} else {
			plan.Unchanged++
		}
	}
	for _, dir := range managed {
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if _, ok := desired[rel]; ok || strings.Contains(path.Base(rel), ".fleetwright-tmp-") {
				return nil
			}
			old, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if !bytes.HasPrefix(old, []byte(manifest.Header)) {
				plan.Unmanaged = append(plan.Unmanaged, rel)
				return nil
			}
			plan.Changes = append(plan.Changes, Change{Path: rel, Op: Delete, Old: old})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", dir, err)
		}
	}
	slices.SortFunc(plan.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	plan.Changes = slices.CompactFunc(plan.Changes, func(a, b Change) bool { return a.Path == b.Path })
	return plan, nil
}

// Apply carries out the plan in root: it stages every new file next to its
// target, renames them into place, then deletes what is gone and prunes
// emptied folders.
func Apply(root string, plan *Plan) error {
	type staged struct{ tmp, dst string }
	var done []staged
	cleanup := func() {
		for _, s := range done {
			_ = os.Remove(s.tmp)
		}
	}
	for _, c := range plan.Changes {
		if c.Op == Delete {
			continue
		}
		dst := filepath.Join(root, filepath.FromSlash(c.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			cleanup()
			return err
		}
		tmp := filepath.Join(filepath.Dir(dst), ".fleetwright-tmp-"+filepath.Base(dst))
		if err := os.WriteFile(tmp, c.New, 0o644); err != nil {
			_ = os.Remove(tmp)
			cleanup()
			return fmt.Errorf("writing %s: %w", c.Path, err)
		}
		done = append(done, staged{tmp, dst})
	}
	for i, s := range done {
		if err := os.Rename(s.tmp, s.dst); err != nil {
			for _, rest := range done[i:] {
				_ = os.Remove(rest.tmp)
			}
			return fmt.Errorf("renaming %s: %w", s.dst, err)
		}
	}
	dirs := map[string]bool{}
	for _, c := range plan.Changes {
		if c.Op != Delete {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(c.Path))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", c.Path, err)
		}
		dirs[filepath.Dir(p)] = true
	}
	// Remove folders left empty, deepest first, never the root.
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	slices.SortFunc(list, func(a, b string) int { return len(b) - len(a) })
	cleanRoot := filepath.Clean(root)
	for _, d := range list {
		for d != cleanRoot && strings.HasPrefix(d, cleanRoot) {
			if err := os.Remove(d); err != nil {
				break // not empty
			}
			d = filepath.Dir(d)
		}
	}
	return nil
}

// Diff returns a unified diff of the changes, labelled with prefix/path.
func Diff(changes []Change, prefix string) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(FileDiff(c, prefix))
	}
	return b.String()
}

// FileDiff returns the unified diff of one change.
func FileDiff(c Change, prefix string) string {
	from, to := path.Join(prefix, c.Path), path.Join(prefix, c.Path)
	switch c.Op {
	case Add:
		from = "/dev/null"
	case Delete:
		to = "/dev/null"
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(c.Old), B: lines(c.New),
		FromFile: from, ToFile: to, Context: 3,
	})
	return d
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	l := strings.SplitAfter(string(b), "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	} else {
		l[len(l)-1] += "\n\\ No newline at end of file\n"
	}
	return l
}
