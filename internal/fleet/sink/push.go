package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/manifest"
)

// Push lands the fleet as one commit on a branch of the fleet repository:
// pushed to the branch itself, or, with Head, to a head branch rebuilt as
// the branch plus that commit (see gitrepo.Target). A fleet already in
// place commits and pushes nothing.
type Push struct {
	// Remote is the fleet repository.
	Remote gitrepo.Remote
	// Branch is the fleet branch; Head, when set, the branch pushed.
	Branch, Head string
	// Path is the fleet's folder in the repository ("" or "." for its
	// root).
	Path string
	// Managed are the folders, relative to the fleet folder, whose
	// generated files the fleet owns (layout.ManagedDirs).
	Managed []string
	// Workdir is where the repository is cloned (bare); "" clones into a
	// temporary folder, removed afterwards.
	Workdir string
	// Author signs the commit; SpecCommit, when set, is named in its
	// message as the apps repository's commit.
	Author     gitrepo.Signature
	SpecCommit string
	// Message, when set, writes the commit message (the first line the
	// pull request's title, the rest its body) for the fleet paths
	// changed, instead of the list of apps render writes.
	Message func(paths []string) string
	// DryRun compares with Branch only: nothing is committed or pushed.
	DryRun bool
	// Progress, when set, hears how the clone of the fleet repository goes:
	// a line when it starts, then the remote's messages (see
	// gitrepo.WithProgress).
	Progress io.Writer

	tempWorkdir bool // Workdir was made by Previous: Land removes it
}

var _ Sink = (*Push)(nil)

// Land compares f with the fleet branch and, unless DryRun, commits and
// pushes the difference.
func (p *Push) Land(ctx context.Context, f *generate.Fleet) (Result, error) {
	dir := p.Workdir
	if p.tempWorkdir {
		defer os.RemoveAll(dir)
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "fleetwright-fleet-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	opts := []gitrepo.Option{gitrepo.WithAuth(p.Remote.Auth), gitrepo.Bare()}
	if p.Progress != nil {
		fmt.Fprintf(p.Progress, "cloning the fleet repository (%s)\n", p.Branch)
		opts = append(opts, gitrepo.WithProgress(p.Progress))
	}
	g, err := gitrepo.Sync(ctx, dir, p.Remote, p.Branch, opts...)
	if err != nil {
		return Result{}, fmt.Errorf("cloning the fleet repository: %w", err)
	}
	defer g.Close()
	ch := p.change(f)
	if p.DryRun {
		cmp, err := g.Compare(ctx, p.Branch, ch)
		if err != nil {
			return Result{}, fmt.Errorf("comparing with the fleet repository: %w", err)
		}
		return p.compared(cmp), nil
	}
	res, err := g.Land(ctx, gitrepo.Target{Base: p.Branch, Branch: p.Head}, ch)
	if err != nil {
		return Result{}, fmt.Errorf("landing the fleet change: %w", err)
	}
	out := Result{Paths: p.rel(res.Paths), Commit: res.Commit, Message: ch.Describe(res.Paths),
		Written: res.Stats.Written, Deleted: res.Stats.Deleted, Unchanged: res.Stats.Unchanged}
	return out, nil
}

// Prefix is the fleet's folder in the repository, "" for its root.
func (p *Push) Prefix() string {
	pre := strings.Trim(path.Clean(p.Path), "/")
	if pre == "." {
		return ""
	}
	return pre
}

// change is the fleet as a change of the repository: the managed folders
// hold the fleet's files, and files render did not generate stay.
func (p *Push) change(f *generate.Fleet) gitrepo.Change {
	pre := p.Prefix()
	var prefixes []string
	for _, d := range p.Managed {
		prefixes = append(prefixes, path.Join(pre, d))
	}
	files := make(map[string][]byte, len(f.Files))
	for _, x := range f.Files {
		files[path.Join(pre, x.Path)] = x.Data
	}
	return gitrepo.Change{
		Prefixes: prefixes, Files: files,
		Keep: func(_ string, b []byte) bool { return !bytes.HasPrefix(b, []byte(manifest.Header)) },
		Describe: func(paths []string) string {
			if p.Message != nil {
				return p.Message(p.rel(paths))
			}
			return CommitMessage(p.rel(paths), p.SpecCommit)
		},
		Author: p.Author,
	}
}

// rel makes repository paths relative to the fleet folder.
func (p *Push) rel(paths []string) []string {
	pre := p.Prefix()
	out := make([]string, len(paths))
	for i, x := range paths {
		out[i] = strings.TrimPrefix(strings.TrimPrefix(x, pre), "/")
	}
	return out
}

// compared turns a comparison into the result of a dry run.
func (p *Push) compared(cmp gitrepo.Comparison) Result {
	res := Result{Commit: cmp.Base, Written: cmp.Stats.Written, Deleted: cmp.Stats.Deleted, Unchanged: cmp.Stats.Unchanged}
	for _, fc := range cmp.Files {
		c := fleet.Change{Path: p.rel([]string{fc.Path})[0], Op: fleet.Update, Old: fc.Old, New: fc.New}
		switch {
		case fc.Deleted:
			c.Op = fleet.Delete
		case fc.Added:
			c.Op = fleet.Add
		}
		res.Changes = append(res.Changes, c)
		res.Paths = append(res.Paths, c.Path)
	}
	return res
}

// CommitMessage describes a fleet commit that changes the files of these
// fleet paths (relative to the fleet folder): the apps it changes and the
// apps repository's commit, when known. It is Push's message when Message
// is not set.
func CommitMessage(paths []string, specCommit string) string {
	changed := layout.AppsOf(paths)
	var b strings.Builder
	switch len(changed) {
	case 0:
		b.WriteString("fleetwright: update the fleet\n")
	case 1:
		fmt.Fprintf(&b, "fleetwright: update %s\n", changed[0])
	default:
		fmt.Fprintf(&b, "fleetwright: update %d apps\n", len(changed))
	}
	if len(changed) > 0 {
		b.WriteString("\nApps changed:\n")
		for _, a := range changed {
			b.WriteString("- " + a + "\n")
		}
	}
	if specCommit != "" {
		b.WriteString("\nSpec-Commit: " + specCommit + "\n")
	}
	return b.String()
}
