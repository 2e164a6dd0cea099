package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/generate"
	gh "github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// landOptions say where the rendered fleet lands: the folder out (mode
// dir), the fleet repository's branch (push) or a pull request to it
// (pull-request); with check or diff it is only compared.
type landOptions struct {
	mode        string // dir, push or pull-request
	check, diff bool
	out         string // the fleet folder, for dir
	repoURL     string // the fleet repository
	base        string // its branch
	prBranch    string // head branch of the pull request
	workdir     string // where the fleet repository is cloned
	ghRepo      string // owner/name on GitHub, for the pull request
	ghAPI       string // GitHub API root
	authorName  string
	authorMail  string
}

// landing is the sink the fleet lands in, and how render names it.
type landing struct {
	sink   sink.Sink
	where  string // in messages: the folder, or the fleet branch
	label  string // put before fleet paths in diffs
	branch string // the fleet branch, for push and pull-request
}

// newLanding picks the sink from the options.
func newLanding(o landOptions, appsRoot string, repo *spec.Repo, io stdio) (landing, error) {
	if o.mode == "dir" {
		d := &sink.Dir{Root: o.out, Managed: layout.ManagedDirs(&repo.Platform), DryRun: o.check || o.diff}
		l := landing{sink: d, where: o.out, label: o.out}
		// The fleet index tells what is already in place: an app whose
		// inputs did not change and whose files are untouched is not
		// generated again.
		if file := fleetIndexFile(io.getenv, o.out); file != "" {
			l.sink = sink.NewIndexed(d, file)
		}
		return l, nil
	}
	token := io.getenv("GITHUB_TOKEN")
	p, err := newPush(o, appsRoot, repo, token)
	if err != nil {
		return landing{}, err
	}
	l := landing{sink: p, where: "the fleet on " + p.Branch, label: p.Prefix(), branch: p.Branch}
	if o.mode != "pull-request" {
		return l, nil
	}
	p.Head = o.prBranch
	pr := &sink.PullRequest{Push: p}
	if !p.DryRun { // comparing asks GitHub nothing
		if pr.Repo, pr.GitHub, err = fleetGitHub(o, p.Remote.URL, token, io); err != nil {
			return landing{}, err
		}
	}
	l.sink = pr
	return l, nil
}

// newPush is the sink that commits to the fleet repository: --fleet-repo,
// else platform.yaml's fleet.repo, else the apps repository's origin.
func newPush(o landOptions, appsRoot string, repo *spec.Repo, token string) (*sink.Push, error) {
	url := o.repoURL
	if url == "" {
		url = repo.Platform.Fleet.Repo
	}
	if url == "" {
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
		url = u
	}
	p := &sink.Push{
		Remote: gitrepo.Remote{URL: url}, Branch: o.base,
		Path: repo.Platform.Fleet.Path, Managed: layout.ManagedDirs(&repo.Platform), Workdir: o.workdir,
		Author:     gitrepo.Signature{Name: o.authorName, Email: o.authorMail},
		SpecCommit: specHead(appsRoot), DryRun: o.check || o.diff,
	}
	if p.Branch == "" {
		p.Branch = repo.Platform.Fleet.Branch
	}
	if token != "" {
		p.Remote.Auth = gitrepo.TokenAuth(token)
	}
	return p, nil
}

// fleetGitHub is the fleet repository on GitHub and a client for it.
func fleetGitHub(o landOptions, repoURL, token string, io stdio) (gh.Repo, gh.PullRequester, error) {
	name := o.ghRepo
	if name == "" {
		name = githubRepoOf(repoURL)
	}
	r, err := gh.ParseRepo(name)
	if err != nil {
		return gh.Repo{}, nil, cli.Usagef("--mode pull-request needs the fleet repository on GitHub as owner/name (--github-repo): %v", err)
	}
	api := o.ghAPI
	if api == "" {
		api = io.getenv("GITHUB_API_URL")
	}
	client, err := gh.New(gh.Config{BaseURL: api, Token: token})
	if err != nil {
		return gh.Repo{}, nil, err
	}
	return r, client, nil
}

// landFleet lands f and tells what happened: on stderr, in a diff on
// stdout for --check and --diff, and in the step outputs.
func landFleet(ctx context.Context, l landing, o landOptions, f *generate.Fleet, apps int, start time.Time, io stdio) error {
	res, err := l.sink.Land(ctx, f)
	// The index is a cache: failing to save it costs speed, not correctness.
	defer func() {
		if res.CacheErr != nil {
			fmt.Fprintf(io.err, "warning: saving the fleet index: %v\n", res.CacheErr)
		}
	}()
	for _, u := range res.Unmanaged {
		fmt.Fprintf(io.err, "warning: %s is not generated by fleetwright; left as it is\n", filepath.Join(o.out, u))
	}
	switch {
	case err != nil && o.mode == "dir":
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	case err != nil:
		return err
	case o.check:
		if res.Empty() {
			fmt.Fprintf(io.err, "%s is up to date (%d files)\n", l.where, res.Unchanged)
			return nil
		}
		fmt.Fprint(io.out, fleet.Diff(res.Changes, l.label))
		fmt.Fprintf(io.err, "%s differs from the specs in %d file(s); run render to update it\n", l.where, len(res.Changes))
		return cli.Failed()
	case o.diff:
		fmt.Fprint(io.out, fleet.Diff(res.Changes, l.label))
		return nil
	}
	outputs := map[string]string{"changed-apps": strings.Join(res.ChangedApps(), ",")}
	if o.mode == "dir" {
		counts := map[fleet.Op]int{}
		for _, c := range res.Changes {
			counts[c.Op]++
		}
		fmt.Fprintf(io.err, "rendered %d app(s) into %s: %d added, %d updated, %d deleted, %d unchanged (%d app(s) up to date, not generated again; %s)\n",
			apps, o.out, counts[fleet.Add], counts[fleet.Update], counts[fleet.Delete], res.Unchanged,
			len(f.Reused), time.Since(start).Round(time.Millisecond))
		return setOutputs(io, outputs)
	}
	outputs["commit"] = res.Commit
	reportPush(l, res, outputs, io)
	return setOutputs(io, outputs)
}

// reportPush tells what a push or a pull request did.
func reportPush(l landing, res sink.Result, outputs map[string]string, io stdio) {
	switch pr := res.PullRequest; {
	case res.Empty():
		fmt.Fprintf(io.err, "%s is up to date; nothing to push\n", l.where)
	case pr == nil:
		fmt.Fprintf(io.err, "pushed %s to %s (%d written, %d deleted)\n", shortSHA(res.Commit), l.branch, res.Written, res.Deleted)
	default:
		outputs["pr-url"], outputs["pr-number"] = pr.URL, strconv.Itoa(pr.Number)
		verb := "up to date"
		if pr.Created {
			verb = "opened"
		} else if pr.Updated {
			verb = "updated"
		}
		fmt.Fprintf(io.err, "fleet pull request #%d %s: %s\n", pr.Number, verb, pr.URL)
	}
}

// fleetIndexFile names the file that caches what render knows of the files
// in outDir (see fleet.Index): under $FLEETWRIGHT_CACHE, else
// $XDG_CACHE_HOME/fleetwright, else ~/.cache/fleetwright; "" when none is
// set, which leaves the index off.
func fleetIndexFile(getenv func(string) string, outDir string) string {
	dir := getenv("FLEETWRIGHT_CACHE")
	if dir == "" {
		if x := getenv("XDG_CACHE_HOME"); x != "" {
			dir = filepath.Join(x, "fleetwright")
		} else if h := getenv("HOME"); h != "" {
			dir = filepath.Join(h, ".cache", "fleetwright")
		}
	}
	abs, err := filepath.Abs(outDir)
	if dir == "" || err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "fleet-index", hex.EncodeToString(sum[:16]))
}

// specHead is the commit the apps repository is at, or "".
func specHead(root string) string {
	top, _, ok := gitTop(root)
	if !ok {
		return ""
	}
	g, err := gitrepo.Open(top)
	if err != nil {
		return ""
	}
	defer g.Close()
	h, err := g.Resolve("HEAD")
	if err != nil {
		return ""
	}
	return h
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

// originURL is the URL of the origin remote of the Git repository holding
// root.
func originURL(root string) (string, error) {
	top, _, ok := gitTop(root)
	if !ok {
		return "", fmt.Errorf("%s is not in a Git repository", root)
	}
	g, err := gitrepo.Open(top)
	if err != nil {
		return "", err
	}
	defer g.Close()
	return g.RemoteURL(gitrepo.RemoteName)
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
