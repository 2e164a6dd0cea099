package sink

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/validate"
)

// Config says where a rendered fleet lands; New makes the Sink. Empty
// fields take platform.yaml's fleet section, then the environment.
type Config struct {
	// Mode is dir (a folder), push (the fleet branch) or pull-request (a
	// pull request to it).
	Mode string
	// DryRun compares only.
	DryRun bool
	// Dir is the fleet folder (dir); it must not be among the specs of the
	// apps repository at AppsRoot.
	Dir string
	// Platform is the apps repository's platform.yaml.
	Platform *spec.Platform
	// AppsRoot is the apps repository's root: its origin is the fleet
	// repository when neither RepoURL nor fleet.repo names one, and its
	// HEAD is named in fleet commits.
	AppsRoot string
	// RepoURL is the fleet repository and Branch its branch (default:
	// fleet.repo, fleet.branch); Head is the pull request's head branch.
	RepoURL, Branch, Head string
	// Workdir is where the fleet repository is cloned ("": a temporary
	// folder).
	Workdir string
	// Author signs fleet commits.
	Author gitrepo.Signature
	// GitHubRepo is the fleet repository on GitHub as owner/name (default:
	// from its URL); GitHubAPI the API root (default: $GITHUB_API_URL).
	GitHubRepo, GitHubAPI string
	// Progress hears how the clone of the fleet repository goes (push and
	// pull-request); nil hears nothing.
	Progress io.Writer
	// Getenv reads FLEETWRIGHT_FLEET_TOKEN, GITHUB_TOKEN, GITHUB_SERVER_URL
	// (see fleetToken), GITHUB_API_URL and, for the fleet index
	// (see IndexFile), FLEETWRIGHT_CACHE, XDG_CACHE_HOME and HOME; nil
	// reads nothing.
	Getenv func(string) string
}

// NoRepoError is a push or pull request with no fleet repository named
// and no origin of the apps repository to fall back on.
type NoRepoError struct{ Err error }

func (e *NoRepoError) Error() string { return "no fleet repository: " + e.Err.Error() }
func (e *NoRepoError) Unwrap() error { return e.Err }

// AmongSpecsError is a fleet that would land among the specs of the apps
// repository: a folder inside apps/ or templates/, or its branch when the
// fleet repository is the apps repository; Reason says how
// (spec.OverlapsSpecs).
type AmongSpecsError struct{ Reason string }

func (e *AmongSpecsError) Error() string { return "the fleet would mix with the specs: " + e.Reason }

// GitHubRepoError is a pull request to a fleet repository not known as
// owner/name on GitHub.
type GitHubRepoError struct{ Err error }

func (e *GitHubRepoError) Error() string { return "the fleet repository on GitHub: " + e.Err.Error() }
func (e *GitHubRepoError) Unwrap() error { return e.Err }

// Validate checks the mode and that the settings the mode needs are there.
func (c *Config) Validate() error {
	switch {
	case c.Mode != "dir" && c.Mode != "push" && c.Mode != "pull-request":
		return fmt.Errorf("mode must be dir, push or pull-request, not %q", c.Mode)
	case c.Platform == nil:
		return fmt.Errorf("no platform")
	case c.Mode != "dir" && c.Platform.Fleet == nil:
		return fmt.Errorf("no fleet settings in the platform")
	case c.Mode == "dir" && c.Dir == "":
		return fmt.Errorf("mode dir needs a fleet folder")
	}
	return nil
}

func (c *Config) getenv(k string) string {
	if c.Getenv == nil {
		return ""
	}
	return c.Getenv(k)
}

// New makes the sink c describes: a Dir (an Indexed one when there is a
// cache folder), a Push or a PullRequest. A pull request that only
// compares asks GitHub nothing, so needs no GitHub repository.
func New(c Config) (Sink, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Mode == "dir" {
		if m := dirAmongSpecs(c.AppsRoot, c.Dir); m != "" {
			return nil, &AmongSpecsError{Reason: m}
		}
		d := &Dir{Root: c.Dir, Managed: layout.ManagedDirs(c.Platform), DryRun: c.DryRun}
		// The fleet index tells what is already in place: an app whose
		// inputs did not change and whose files are untouched is not
		// generated again.
		if file := IndexFile(c.getenv, c.Dir); file != "" {
			return NewIndexed(d, file), nil
		}
		return d, nil
	}
	// The fleet repository's own token, when given, also opens its pull
	// requests (a GitHub App's token, so that the fleet repository's
	// workflows run on them).
	token := c.getenv("GITHUB_TOKEN")
	if t := c.getenv("FLEETWRIGHT_FLEET_TOKEN"); t != "" {
		token = t
	}
	p, err := c.push()
	if err != nil {
		return nil, err
	}
	if c.Mode == "push" {
		return p, nil
	}
	p.Head = c.Head
	pr := &PullRequest{Push: p}
	if !p.DryRun {
		if pr.Repo, pr.GitHub, err = c.gitHub(p.Remote.URL, token); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// push is the sink that commits to the fleet repository.
func (c *Config) push() (*Push, error) {
	url, err := c.repoURL()
	if err != nil {
		return nil, err
	}
	p := &Push{
		Remote: gitrepo.Remote{URL: url}, Branch: c.Branch,
		Path: c.Platform.Fleet.Path, Managed: layout.ManagedDirs(c.Platform), Workdir: c.Workdir,
		Author: c.Author, SpecCommit: specHead(c.AppsRoot), DryRun: c.DryRun,
		Progress: c.Progress,
	}
	if p.Branch == "" {
		p.Branch = c.Platform.Fleet.Branch
	}
	token, err := c.fleetToken(url)
	if err != nil {
		return nil, err
	}
	if token != "" {
		p.Remote.Auth = gitrepo.TokenAuth(token)
	}
	return p, nil
}

// fleetToken is the token sent to the fleet repository at rawURL:
// FLEETWRIGHT_FLEET_TOKEN, named for this repository, whatever its host,
// over HTTPS (plain HTTP only to a loopback address); else GITHUB_TOKEN,
// only over HTTPS to the GitHub server it was issued by
// ($GITHUB_SERVER_URL, default https://github.com). A path, an SSH
// address or any other host gets no token.
func (c *Config) fleetToken(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", nil
	}
	if t := c.getenv("FLEETWRIGHT_FLEET_TOKEN"); t != "" {
		if u.Scheme == "http" && !isLoopback(u.Hostname()) {
			return "", fmt.Errorf("refusing to send FLEETWRIGHT_FLEET_TOKEN to %s over plain HTTP; use an https:// fleet repository", u.Host)
		}
		return t, nil
	}
	server := c.getenv("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	gh, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || !strings.EqualFold(u.Host, gh.Host) {
		return "", nil
	}
	return c.getenv("GITHUB_TOKEN"), nil
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// repoURL is the fleet repository: RepoURL, else fleet.repo, else the
// apps repository's origin, where the fleet must not go among the specs.
func (c *Config) repoURL() (string, error) {
	if url := cmp.Or(c.RepoURL, c.Platform.Fleet.Repo); url != "" {
		return url, nil
	}
	u, err := originURL(c.AppsRoot)
	if err != nil {
		return "", &NoRepoError{Err: err}
	}
	if _, rel, ok := gitrepo.FindTop(c.AppsRoot); ok {
		if sub, in := within(path.Clean(c.Platform.Fleet.Path), path.Clean(rel)); in {
			if m := validate.OverlapsSpecs(sub); m != "" {
				return "", &AmongSpecsError{Reason: m}
			}
		}
	}
	return u, nil
}

// gitHub is the fleet repository on GitHub and a client for it.
func (c *Config) gitHub(repoURL, token string) (github.Repo, github.PullRequester, error) {
	r, err := github.ParseRepo(cmp.Or(c.GitHubRepo, GitHubRepoOf(repoURL)))
	if err != nil {
		return github.Repo{}, nil, &GitHubRepoError{Err: err}
	}
	client, err := github.New(github.Config{BaseURL: cmp.Or(c.GitHubAPI, c.getenv("GITHUB_API_URL")), Token: token})
	if err != nil {
		return github.Repo{}, nil, err
	}
	return r, client, nil
}

// dirAmongSpecs says why the folder dir cannot hold the fleet of the apps
// repository at root, or "".
func dirAmongSpecs(root, dir string) string {
	absRoot, err1 := filepath.Abs(root)
	absDir, err2 := filepath.Abs(dir)
	if root == "" || err1 != nil || err2 != nil {
		return ""
	}
	rel, err := filepath.Rel(absRoot, absDir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return validate.OverlapsSpecs(filepath.ToSlash(rel))
}

// IndexFile names the file that caches what is known of the files in
// outDir (see fleet.Index): under $FLEETWRIGHT_CACHE, else
// $XDG_CACHE_HOME/fleetwright, else ~/.cache/fleetwright; "" when none is
// set, which leaves the index off.
func IndexFile(getenv func(string) string, outDir string) string {
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

// specHead is the commit the apps repository at root is at, or "".
func specHead(root string) string {
	top, _, ok := gitrepo.FindTop(root)
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
	top, _, ok := gitrepo.FindTop(root)
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

// GitHubRepoOf returns owner/name of a GitHub remote URL, or "".
func GitHubRepoOf(u string) string {
	if m := githubURL.FindStringSubmatch(u); m != nil {
		return m[1]
	}
	return ""
}
