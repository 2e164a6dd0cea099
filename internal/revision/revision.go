// Package revision finds, for each app of an apps repository in a Git work
// tree, the last commit that changed its spec: its folder and, for a
// templated app, its template. render writes it on the app's Flux objects
// and verify must compute the same to compare fleets.
package revision

import (
	"context"
	"path"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Specs returns, when the apps repository at root is in a Git work tree,
// the last commit at ref that changed each app's folder or its template; a
// commit that touches neither changes none of the app's files. It returns
// nil outside Git or before the first commit.
func Specs(ctx context.Context, root, ref string, repo *load.Repo) (func(*load.LoadedApp) string, error) {
	top, rel, ok := gitrepo.FindTop(root)
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
	sources := func(a *load.LoadedApp) []string {
		out := []string{path.Join(rel, path.Dir(a.File))}
		if a.Spec.Template != nil {
			out = append(out, path.Join(rel, load.TemplateDir(a.Spec.Template.Name)))
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
	return func(a *load.LoadedApp) string {
		var newest gitrepo.Commit
		for _, p := range sources(a) {
			if c, ok := last[p]; ok && (newest.Hash == "" || c.Committer.When.After(newest.Committer.When)) {
				newest = c
			}
		}
		return newest.Hash
	}, nil
}
