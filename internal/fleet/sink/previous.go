package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
)

// Previewer is a Sink that reads the fleet as it is before Land: what
// generate.Options.Previous asks.
type Previewer interface {
	Sink
	// Previous reads the fleet's files under the folders dirs (relative to
	// the fleet root) and returns a reader of them by path.
	Previous(ctx context.Context, dirs []string) (func(path string) ([]byte, bool), error)
}

var (
	_ Previewer = (*Dir)(nil)
	_ Previewer = (*Indexed)(nil)
	_ Previewer = (*Push)(nil)
	_ Previewer = (*PullRequest)(nil)
)

// Previous reads the files from the folder as they are, when asked.
func (d *Dir) Previous(_ context.Context, _ []string) (func(string) ([]byte, bool), error) {
	return func(p string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join(d.Root, filepath.FromSlash(p)))
		return b, err == nil
	}, nil
}

// Previous is the folder's Previous.
func (x *Indexed) Previous(ctx context.Context, dirs []string) (func(string) ([]byte, bool), error) {
	return x.dir.Previous(ctx, dirs)
}

// Previous is the Push's Previous: the fleet branch is what Flux applies.
func (p *PullRequest) Previous(ctx context.Context, dirs []string) (func(string) ([]byte, bool), error) {
	return p.Push.Previous(ctx, dirs)
}

// Previous clones the fleet repository (Land then fetches into the same
// clone) and reads the files under dirs on the fleet branch. A branch that
// does not exist yet holds nothing.
func (p *Push) Previous(ctx context.Context, dirs []string) (func(string) ([]byte, bool), error) {
	if p.Workdir == "" {
		d, err := os.MkdirTemp("", "fleetwright-fleet-")
		if err != nil {
			return nil, err
		}
		p.Workdir, p.tempWorkdir = d, true
	}
	g, err := gitrepo.Sync(ctx, p.Workdir, p.Remote, p.Branch, gitrepo.WithAuth(p.Remote.Auth), gitrepo.Bare())
	if err != nil {
		return nil, fmt.Errorf("cloning the fleet repository: %w", err)
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
		return nil, fmt.Errorf("reading the fleet branch %s: %w", p.Branch, err)
	}
	return func(q string) ([]byte, bool) {
		b, ok := files[path.Join(pre, q)]
		return b, ok
	}, nil
}
