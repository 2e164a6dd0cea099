package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Job is one build of a RunLevels call.
type Job struct {
	// Name identifies the build in progress lines and results; unique.
	Name    string
	Request Request
}

// RunOptions configure RunLevels.
type RunOptions struct {
	// Concurrency bounds the builds running at once; default 2.
	Concurrency int
	// Progress receives one line per build event; nil discards.
	Progress io.Writer
}

// RunLevels runs jobs level by level: every job of a level may depend on
// the levels before it, so a level starts when the previous one has
// finished. Within a level up to Concurrency jobs run at once. The first
// failure cancels the remaining builds; its output (for builds that ran a
// command) goes to Progress and the error names the job. Results are keyed
// by job name.
func RunLevels(ctx context.Context, b Builder, levels [][]Job, opts RunOptions) (map[string]Result, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 2
	}
	total := 0
	seen := map[string]bool{}
	for _, level := range levels {
		for _, j := range level {
			if j.Name == "" || seen[j.Name] {
				return nil, fmt.Errorf("build jobs: empty or repeated name %q", j.Name)
			}
			seen[j.Name] = true
			total++
		}
	}
	p := &progress{w: opts.Progress, total: total}
	results := make(map[string]Result, total)
	var mu sync.Mutex
	n := 0
	for _, level := range levels {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(opts.Concurrency)
		for _, j := range level {
			n++
			num := n
			g.Go(func() error {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				req := j.Request
				if req.Name == "" {
					req.Name = j.Name
				}
				p.line(num, j.Name, "building")
				res, err := b.Build(gctx, req)
				if err != nil {
					if gctx.Err() != nil && errors.Is(err, context.Canceled) {
						p.line(num, j.Name, "cancelled")
						return err
					}
					p.failure(num, j.Name, err)
					return fmt.Errorf("%s: %w", j.Name, err)
				}
				verb := "pushed"
				if res.Reused {
					verb = "up to date"
				}
				p.line(num, j.Name, verb+" "+res.Ref)
				mu.Lock()
				results[j.Name] = res
				mu.Unlock()
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return results, err
		}
	}
	return results, nil
}

// progress writes whole lines, one writer at a time.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
}

func (p *progress) line(n int, name, msg string) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "build %d/%d %s: %s\n", n, p.total, name, msg)
}

func (p *progress) failure(n int, name string, err error) {
	if p.w == nil {
		return
	}
	var withOutput interface{ BuildOutput() string }
	var b strings.Builder
	fmt.Fprintf(&b, "build %d/%d %s: failed: %v\n", n, p.total, name, err)
	if errors.As(err, &withOutput) {
		for _, l := range strings.Split(strings.TrimRight(withOutput.BuildOutput(), "\n"), "\n") {
			b.WriteString("    | " + l + "\n")
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.w, b.String())
}
