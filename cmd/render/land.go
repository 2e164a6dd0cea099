package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	gh "github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// landOptions say where a fleet change goes when it is not a folder.
type landOptions struct {
	mode       string // push or pull-request
	repoURL    string // the fleet repository
	base       string // its branch
	prBranch   string // head branch of the pull request
	workdir    string // where the fleet repository is cloned
	ghRepo     string // owner/name on GitHub, for the pull request
	ghAPI      string // GitHub API root
	authorName string
	authorMail string
}

// land commits the rendered fleet to the fleet repository: pushed directly
// or as the one pull request of the render branch. A run with nothing to
// change pushes nothing and opens nothing.
func land(ctx context.Context, o landOptions, appsRoot string, repo *spec.Repo, f *generate.Fleet, io stdio) (map[string]string, error) {
	token := io.getenv("GITHUB_TOKEN")
	if o.repoURL == "" {
		o.repoURL = repo.Platform.Fleet.Repo
	}
	if o.repoURL == "" {
		u, err := originURL(appsRoot)
		if err != nil {
			return nil, cli.Usagef("--mode %s needs the fleet repository: set --fleet-repo or platform.yaml fleet.repo (%v)", o.mode, err)
		}
		// The fleet goes to the apps repository itself: not among the specs.
		if _, rel, ok := gitTop(appsRoot); ok {
			if sub, in := within(path.Clean(repo.Platform.Fleet.Path), path.Clean(rel)); in {
				if m := spec.OverlapsSpecs(sub); m != "" {
					return nil, cli.Usagef("the fleet would go to the apps repository itself and mix with the specs: %s; set fleet.path, or fleet.repo for a repository of its own", m)
				}
			}
		}
		o.repoURL = u
	}
	if o.base == "" {
		o.base = repo.Platform.Fleet.Branch
	}
	workdir := o.workdir
	if workdir == "" {
		d, err := os.MkdirTemp("", "fleetwright-fleet-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		workdir = d
	}
	remote := gitrepo.Remote{URL: o.repoURL}
	if token != "" {
		remote.Auth = gitrepo.TokenAuth(token)
	}
	g, err := gitrepo.Sync(ctx, workdir, remote, o.base, gitrepo.WithAuth(remote.Auth), gitrepo.Bare())
	if err != nil {
		return nil, fmt.Errorf("cloning the fleet repository: %w", err)
	}
	defer g.Close()

	// The fleet's folder inside the fleet repository.
	prefix := strings.Trim(path.Clean(repo.Platform.Fleet.Path), "/")
	if prefix == "." {
		prefix = ""
	}
	var prefixes []string
	for _, d := range layout.ManagedDirs(&repo.Platform) {
		prefixes = append(prefixes, path.Join(prefix, d))
	}
	files := map[string][]byte{}
	for p, b := range f.Map() {
		files[path.Join(prefix, p)] = b
	}
	target := gitrepo.Target{Base: o.base}
	if o.mode == "pull-request" {
		target.Branch = o.prBranch
	}
	specCommit := specHead(appsRoot)
	describe := func(paths []string) string { return commitMessage(appsOfPaths(paths, prefix), specCommit) }
	res, err := g.Land(ctx, target, gitrepo.Change{
		Prefixes: prefixes, Files: files,
		// Files render did not generate stay as they are.
		Keep:     func(_ string, b []byte) bool { return !bytes.HasPrefix(b, []byte(manifest.Header)) },
		Describe: describe,
		Author:   gitrepo.Signature{Name: o.authorName, Email: o.authorMail},
	})
	if err != nil {
		return nil, fmt.Errorf("landing the fleet change: %w", err)
	}
	changed, msg := appsOfPaths(res.Paths, prefix), describe(res.Paths)
	out := map[string]string{"changed-apps": strings.Join(changed, ","), "commit": res.Commit}
	switch {
	case !res.Changed:
		fmt.Fprintf(io.err, "the fleet on %s is up to date; nothing to push\n", o.base)
		return out, nil
	case o.mode == "push":
		fmt.Fprintf(io.err, "pushed %s to %s (%d written, %d deleted)\n", shortSHA(res.Commit), o.base, res.Stats.Written, res.Stats.Deleted)
		return out, nil
	}
	ghRepo := o.ghRepo
	if ghRepo == "" {
		ghRepo = githubRepoOf(o.repoURL)
	}
	r, err := gh.ParseRepo(ghRepo)
	if err != nil {
		return nil, cli.Usagef("--mode pull-request needs the fleet repository on GitHub as owner/name (--github-repo): %v", err)
	}
	client, err := gh.New(gh.Config{BaseURL: o.ghAPI, Token: token})
	if err != nil {
		return nil, err
	}
	subject, body, _ := strings.Cut(msg, "\n")
	pr, err := client.EnsurePullRequest(ctx, r, o.prBranch, o.base, subject, strings.TrimSpace(body))
	if err != nil {
		return nil, fmt.Errorf("opening the fleet pull request: %w", err)
	}
	out["pr-url"], out["pr-number"] = pr.URL, strconv.Itoa(pr.Number)
	verb := "up to date"
	if pr.Created {
		verb = "opened"
	} else if pr.Updated {
		verb = "updated"
	}
	fmt.Fprintf(io.err, "fleet pull request #%d %s: %s\n", pr.Number, verb, pr.URL)
	return out, nil
}

// appsOfPaths lists the apps (cluster/project/app) that fleet paths belong
// to; the paths carry the fleet folder's prefix inside the repository.
func appsOfPaths(paths []string, prefix string) []string {
	rel := make([]string, len(paths))
	for i, p := range paths {
		rel[i] = strings.TrimPrefix(strings.TrimPrefix(p, prefix), "/")
	}
	return layout.AppsOf(rel)
}

func commitMessage(changed []string, specCommit string) string {
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

// specHead is the commit the apps repository is at, or "".
func specHead(root string) string {
	top, _, ok := gitTop(root)
	if !ok {
		return ""
	}
	r, err := git.PlainOpen(top)
	if err != nil {
		return ""
	}
	h, err := r.Head()
	if err != nil {
		return ""
	}
	return h.Hash().String()
}

// within returns p relative to base when p is base or below it (slash
// paths, cleaned; base "." holds everything).
func within(p, base string) (string, bool) {
	switch {
	case base == ".":
		return p, true
	case p == base:
		return ".", true
	case strings.HasPrefix(p, base+"/"):
		return p[len(base)+1:], true
	}
	return "", false
}

func originURL(root string) (string, error) {
	top, _, ok := gitTop(root)
	if !ok {
		return "", fmt.Errorf("%s is not in a Git repository", root)
	}
	r, err := git.PlainOpen(top)
	if err != nil {
		return "", err
	}
	rem, err := r.Remote("origin")
	if err != nil {
		return "", err
	}
	return rem.Config().URLs[0], nil
}

var githubURL = regexp.MustCompile(`github\.com[:/]([^/]+/[^/]+?)(\.git)?/?$`)

// githubRepoOf returns owner/name of a GitHub remote URL, or "".
func githubRepoOf(u string) string {
	if m := githubURL.FindStringSubmatch(u); m != nil {
		return m[1]
	}
	return ""
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
