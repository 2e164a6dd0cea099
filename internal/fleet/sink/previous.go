package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
)

// Previewer is a Sink that reads the fleet as it is before Land: what
// generate.Options.Previous and PreviousDir ask.
type Previewer interface {
	Sink
	// Previous reads the fleet's files under the folders dirs (relative to
	// the fleet root).
	Previous(ctx context.Context, dirs []string) (Before, error)
}

// Before is the fleet as it is before Land.
type Before struct {
	// Read reads a file by its path from the fleet root (false: none).
	Read func(path string) ([]byte, bool)
	// List lists the files directly in a folder, sorted.
	List func(dir string) []string
}

var (
	_ Previewer = (*Dir)(nil)
	_ Previewer = (*Indexed)(nil)
	_ Previewer = (*Push)(nil)
	_ Previewer = (*PullRequest)(nil)
)

// Previous reads the files from the folder as they are, when asked.
func (d *Dir) Previous(_ context.Context, _ []string) (Before, error) {
	return Before{
		Read: func(p string) ([]byte, bool) {
			b, err := os.ReadFile(filepath.Join(d.Root, filepath.FromSlash(p)))
			return b, err == nil
		},
		List: func(dir string) []string {
			entries, err := os.ReadDir(filepath.Join(d.Root, filepath.FromSlash(dir)))
			if err != nil {
				return nil
			}
			var out []string
			for _, e := range entries {
				if e.Type().IsRegular() {
					out = append(out, path.Join(dir, e.Name()))
				}
			}
			return out
		},
	}, nil
}

// Previous is the folder's Previous.
func (x *Indexed) Previous(ctx context.Context, dirs []string) (Before, error) {
	return x.dir.Previous(ctx, dirs)
}

// Previous is the Push's Previous: the fleet branch is what Flux applies.
func (p *PullRequest) Previous(ctx context.Context, dirs []string) (Before, error) {
	return p.Push.Previous(ctx, dirs)
}

// Previous clones the fleet repository (Land then fetches into the same
// clone) and reads the files under dirs on the fleet branch. A branch that
// does not exist yet holds nothing.
func (p *Push) Previous(ctx context.Context, dirs []string) (Before, error) {
	if p.Workdir == "" {
		d, err := os.MkdirTemp("", "fleetwright-fleet-")
		if err != nil {
			return Before{}, err
		}
		p.Workdir, p.tempWorkdir = d, true
	}
	g, err := gitrepo.Sync(ctx, p.Workdir, p.Remote, p.Branch, gitrepo.WithAuth(p.Remote.Auth), gitrepo.Bare())
	if err != nil {
		return Before{}, fmt.Errorf("cloning the fleet repository: %w", err)
	}
	defer g.Close()
	pre := p.Prefix()
	prefixes := make([]string, len(dirs))
	for i, d := range dirs {
		prefixes[i] = path.Join(pre, d)
	}
	files, err := g.Tree(ctx, p.Branch, prefixes...)
	if errors.Is(err, gitrepo.ErrRefNotFound) { // an empty repository
		files, err = map[string][]byte{}, nil
	}
	if err != nil {
		return Before{}, fmt.Errorf("reading the fleet branch %s: %w", p.Branch, err)
	}
	byPath := files // paths from the fleet root
	if pre != "" {
		byPath = make(map[string][]byte, len(files))
		for q, b := range files {
			if rel, ok := strings.CutPrefix(q, pre+"/"); ok {
				byPath[rel] = b
			}
		}
	}
	return Before{
		Read: func(q string) ([]byte, bool) {
			b, ok := byPath[q]
			return b, ok
		},
		List: generate.FilesIn(byPath),
	}, nil
}
