package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fleetwright/fleetwright/internal/fleet"
)

// tree is the fleet folder read into memory: every regular file by slash
// path relative to the folder. Git metadata is left out.
type tree struct {
	root  string // absolute, cleaned
	files map[string][]byte
	paths []string // sorted
	dirs  map[string]bool
}

// readTree reads every file under root with workers goroutines.
func readTree(ctx context.Context, root string, workers int) (*tree, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	// A render interrupted while it wrote the folder left a journal: its
	// change is finished first, so the fleet read is a whole one.
	if err := fleet.Recover(abs); err != nil {
		return nil, fmt.Errorf("reading fleet: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("reading fleet: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("reading fleet: %s is not a folder", root)
	}
	t := &tree{root: abs, files: map[string][]byte{}, dirs: map[string]bool{"": true}}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != abs {
				return filepath.SkipDir
			}
			if rel := relSlash(abs, p); rel != "" {
				t.dirs[rel] = true
			}
			return nil
		}
		switch {
		case d.Type().IsRegular():
			t.paths = append(t.paths, relSlash(abs, p))
		case d.Type()&fs.ModeSymlink != 0:
			// A link to a file counts as that file, as in a Git checkout.
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				t.paths = append(t.paths, relSlash(abs, p))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading fleet: %w", err)
	}
	slices.Sort(t.paths)
	data := make([][]byte, len(t.paths))
	errs := make([]error, len(t.paths))
	parallel(ctx, len(t.paths), workers, func(i int) {
		data[i], errs[i] = readFile(filepath.Join(abs, filepath.FromSlash(t.paths[i])))
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kept := t.paths[:0]
	for i, p := range t.paths {
		switch {
		case errors.Is(errs[i], fs.ErrNotExist):
			continue // a dangling symbolic link
		case errs[i] != nil:
			return nil, fmt.Errorf("reading fleet: %w", errs[i])
		}
		t.files[p] = data[i]
		kept = append(kept, p)
	}
	t.paths = kept
	return t, nil
}

func relSlash(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// under returns the sorted paths at or below dir ("" is everything).
func (t *tree) under(dir string) []string {
	if dir == "" {
		return t.paths
	}
	prefix := dir + "/"
	i, _ := slices.BinarySearch(t.paths, prefix)
	j := i
	for j < len(t.paths) && strings.HasPrefix(t.paths[j], prefix) {
		j++
	}
	return t.paths[i:j]
}

// isYAML reports whether a file name is a YAML file.
func isYAML(p string) bool {
	ext := path.Ext(p)
	return ext == ".yaml" || ext == ".yml"
}

// parallel calls f(0..n-1) on up to workers goroutines, stopping early
// when ctx ends.
func parallel(ctx context.Context, n, workers int, f func(i int)) {
	if workers < 1 {
		workers = 1
	}
	workers = min(workers, n)
	var wg sync.WaitGroup
	next := make(chan int, 2*workers)
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
}
