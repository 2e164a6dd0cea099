package main

import (
	"context"
	"os"
	"path"
	"path/filepath"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// specRevisions gives generate the spec revisions render gives it (see
// cmd/render/revisions.go; the two must agree or every Flux object shows as
// drift): when the apps repository is in a Git work tree, the last commit
// at ref that changed each app's folder or its template.
func specRevisions(ctx context.Context, root, ref string, repo *spec.Repo) (func(*spec.LoadedApp) string, error) {
	top, rel, ok := gitTop(root)
	if !ok {
		return nil, nil
	}
	g, err := gitrepo.Open(top)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if _, err := g.Resolve(ref); err != nil {
		if ref == "HEAD" {
			return nil, nil // no commit yet
		}
		return nil, err
	}
	sources := func(a *spec.LoadedApp) []string {
		out := []string{path.Join(rel, path.Dir(a.File))}
		if a.Spec.Template != nil {
			out = append(out, path.Join(rel, spec.TemplateDir(a.Spec.Template.Name)))
		}
		return out
	}
	seen := map[string]bool{}
	var paths []string
	for _, a := range repo.Apps {
		for _, p := range sources(a) {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	last, err := g.LastCommitFor(ctx, ref, paths...)
	if err != nil {
		return nil, err
	}
	return func(a *spec.LoadedApp) string {
		var newest gitrepo.Commit
		for _, p := range sources(a) {
			if c, ok := last[p]; ok && (newest.Hash == "" || c.Committer.When.After(newest.Committer.When)) {
				newest = c
			}
		}
		return newest.Hash
	}, nil
}

// gitTop finds the Git work tree holding dir and dir's slash path in it.
func gitTop(dir string) (top, rel string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			r, err := filepath.Rel(d, abs)
			if err != nil {
				return "", "", false
			}
			return d, filepath.ToSlash(r), true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", false
		}
		d = parent
	}
}
