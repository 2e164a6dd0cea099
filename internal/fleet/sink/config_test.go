package sink_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestIndexFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		getenv func(string) string
		under  string // "" for no index
	}{
		{"fleetwright cache first", env("FLEETWRIGHT_CACHE", "/c", "XDG_CACHE_HOME", "/x", "HOME", "/h"), "/c/fleet-index/"},
		{"xdg cache", env("XDG_CACHE_HOME", "/x", "HOME", "/h"), "/x/fleetwright/fleet-index/"},
		{"home", env("HOME", "/h"), "/h/.cache/fleetwright/fleet-index/"},
		{"nothing set", env(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := filepath.ToSlash(sink.IndexFile(tc.getenv, "out"))
			if tc.under == "" {
				if got != "" {
					t.Fatalf("IndexFile = %q, want none", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.under) || len(got) != len(tc.under)+32 {
				t.Fatalf("IndexFile = %q, want a 32-digit name under %s", got, tc.under)
			}
		})
	}
	e := env("FLEETWRIGHT_CACHE", "/c")
	if a, b := sink.IndexFile(e, "one"), sink.IndexFile(e, "two"); a == b {
		t.Errorf("two folders share the index file %s", a)
	}
	abs, _ := filepath.Abs("one")
	if a, b := sink.IndexFile(e, "one"), sink.IndexFile(e, abs); a != b {
		t.Errorf("one folder, two index files: %s, %s", a, b)
	}
}

func TestGitHubRepoOf(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"https://github.com/acme/fleet.git":  "acme/fleet",
		"https://github.com/acme/fleet":      "acme/fleet",
		"https://github.com/acme/fleet/":     "acme/fleet",
		"git@github.com:acme/fleet.git":      "acme/fleet",
		"ssh://git@github.com/acme/fleet":    "acme/fleet",
		"https://gitlab.com/acme/fleet.git":  "",
		"https://github.com/acme":            "",
		"https://github.com/acme/fleet/tree": "",
	} {
		if got := sink.GitHubRepoOf(url); got != want {
			t.Errorf("GitHubRepoOf(%q) = %q, want %q", url, got, want)
		}
	}
}

// appsRepo is a Git work tree with an origin and a commit, as the apps
// repository.
func appsRepo(t *testing.T, origin string) (root, head string) {
	t.Helper()
	root = t.TempDir()
	golden.WriteFile(t, filepath.Join(root, "platform.yaml"), "fleet: {path: .}\n")
	gittest.Git(t, root, "init", "-q", "-b", "main")
	gittest.Git(t, root, "remote", "add", "origin", origin)
	gittest.Git(t, root, "add", ".")
	gittest.Git(t, root, "commit", "-q", "-m", "specs")
	return root, strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))
}

// TestNew: the mode picks the sink, and empty settings come from
// platform.yaml, the apps repository and the environment.
func TestNew(t *testing.T) {
	t.Parallel()
	apps, head := appsRepo(t, "https://github.com/acme/apps.git")
	noGit := t.TempDir()
	plat := func(path, repo string) *spec.Platform {
		return &spec.Platform{Fleet: &spec.Fleet{Path: path, Repo: repo, Branch: "main"}}
	}
	type want struct {
		kind, url, branch, head, ghRepo, specCommit string
		auth, dryRun                                bool
	}
	describe := func(s sink.Sink) want {
		var p *sink.Push
		w := want{}
		switch s := s.(type) {
		case *sink.Dir:
			return want{kind: "dir", dryRun: s.DryRun}
		case *sink.Indexed:
			return want{kind: "indexed"}
		case *sink.Push:
			w.kind, p = "push", s
		case *sink.PullRequest:
			w.kind, p, w.ghRepo = "pull-request", s.Push, s.Repo.String()
			if s.GitHub == nil {
				w.ghRepo = "no client"
			}
		}
		w.url, w.branch, w.head, w.specCommit = p.Remote.URL, p.Branch, p.Head, p.SpecCommit
		w.auth, w.dryRun = p.Remote.Auth != nil, p.DryRun
		return w
	}
	for _, tc := range []struct {
		name string
		cfg  sink.Config
		want want
		err  any // a pointer to the error type wanted
	}{
		{name: "folder", cfg: sink.Config{Mode: "dir", Dir: "out", DryRun: true, Platform: plat(".", "")},
			want: want{kind: "dir", dryRun: true}},
		{name: "folder with an index", cfg: sink.Config{Mode: "dir", Dir: "out", Platform: plat(".", ""), Getenv: env("HOME", "/h")},
			want: want{kind: "indexed"}},
		{name: "folder beside the specs", cfg: sink.Config{Mode: "dir", AppsRoot: noGit, Dir: filepath.Join(noGit, "fleet"), Platform: plat(".", "")},
			want: want{kind: "dir"}},
		{name: "folder outside the apps repository", cfg: sink.Config{Mode: "dir", AppsRoot: noGit, Dir: filepath.Join(noGit, "..", "fleet"), Platform: plat(".", "")},
			want: want{kind: "dir"}},
		{name: "folder of the apps repository", cfg: sink.Config{Mode: "dir", AppsRoot: noGit, Dir: noGit, Platform: plat(".", "")},
			err: new(*sink.AmongSpecsError)},
		{name: "folder inside templates/", cfg: sink.Config{Mode: "dir", AppsRoot: noGit, Dir: filepath.Join(noGit, "templates", "fleet"), Platform: plat(".", "")},
			err: new(*sink.AmongSpecsError)},
		{name: "push to the flag's repository", cfg: sink.Config{Mode: "push", AppsRoot: noGit, RepoURL: "https://git.example/fleet.git", Branch: "prod", Platform: plat(".", "https://git.example/other.git"), Getenv: env("FLEETWRIGHT_FLEET_TOKEN", "t")},
			want: want{kind: "push", url: "https://git.example/fleet.git", branch: "prod", auth: true}},
		{name: "push to platform.yaml's repository", cfg: sink.Config{Mode: "push", AppsRoot: noGit, Platform: plat(".", "https://git.example/fleet.git")},
			want: want{kind: "push", url: "https://git.example/fleet.git", branch: "main"}},
		{name: "push to the apps repository's origin", cfg: sink.Config{Mode: "push", AppsRoot: apps, Platform: plat("deploy", "")},
			want: want{kind: "push", url: "https://github.com/acme/apps.git", branch: "main", specCommit: head}},
		{name: "push among the specs", cfg: sink.Config{Mode: "push", AppsRoot: apps, Platform: plat(".", "")},
			err: new(*sink.AmongSpecsError)},
		{name: "push into apps/", cfg: sink.Config{Mode: "push", AppsRoot: apps, Platform: plat("apps/fleet", "")},
			err: new(*sink.AmongSpecsError)},
		{name: "push without a repository", cfg: sink.Config{Mode: "push", AppsRoot: noGit, Platform: plat("deploy", "")},
			err: new(*sink.NoRepoError)},
		{name: "pull request", cfg: sink.Config{Mode: "pull-request", AppsRoot: noGit, Head: "fw/render", Platform: plat(".", "git@github.com:acme/fleet.git")},
			want: want{kind: "pull-request", url: "git@github.com:acme/fleet.git", branch: "main", head: "fw/render", ghRepo: "acme/fleet"}},
		{name: "pull request to the flag's GitHub repository", cfg: sink.Config{Mode: "pull-request", AppsRoot: noGit, GitHubRepo: "acme/f2", Platform: plat(".", "https://git.example/fleet.git")},
			want: want{kind: "pull-request", url: "https://git.example/fleet.git", branch: "main", ghRepo: "acme/f2"}},
		{name: "pull request compared only asks GitHub nothing", cfg: sink.Config{Mode: "pull-request", AppsRoot: noGit, DryRun: true, Platform: plat(".", "https://git.example/fleet.git")},
			want: want{kind: "pull-request", url: "https://git.example/fleet.git", branch: "main", ghRepo: "no client", dryRun: true}},
		{name: "pull request off GitHub", cfg: sink.Config{Mode: "pull-request", AppsRoot: noGit, Platform: plat(".", "https://git.example/fleet.git")},
			err: new(*sink.GitHubRepoError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := sink.New(tc.cfg)
			if tc.err != nil {
				if !errors.As(err, tc.err) {
					t.Fatalf("New: %v, want a %T", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, describe(s), cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("sink (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	p := &spec.Platform{}
	for _, c := range []sink.Config{
		{Mode: "", Platform: p, Dir: "out"},
		{Mode: "copy", Platform: p, Dir: "out"},
		{Mode: "dir", Platform: p},
		{Mode: "push"},
		{Mode: "push", Platform: p},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
		if _, err := sink.New(c); err == nil {
			t.Errorf("New(%+v): no error", c)
		}
	}
	if err := (&sink.Config{Mode: "push", Platform: &spec.Platform{Fleet: &spec.Fleet{}}}).Validate(); err != nil {
		t.Errorf("push: %v", err)
	}
}

// GITHUB_TOKEN goes only to the GitHub server it was issued by, over
// HTTPS; FLEETWRIGHT_FLEET_TOKEN to the fleet repository it is named for,
// never over plain HTTP but to loopback.
func TestFleetToken(t *testing.T) {
	t.Parallel()
	const fleetToken = "fleet-tok-5ecret"
	plat := &spec.Platform{Fleet: &spec.Fleet{Path: ".", Branch: "main"}}
	for _, tc := range []struct {
		url    string
		getenv func(string) string
		auth   bool
		err    bool
	}{
		{url: "https://github.com/acme/fleet.git", getenv: env("GITHUB_TOKEN", "t"), auth: true},
		{url: "https://GitHub.com/acme/fleet", getenv: env("GITHUB_TOKEN", "t"), auth: true},
		{url: "http://github.com/acme/fleet.git", getenv: env("GITHUB_TOKEN", "t")},
		{url: "https://git.example/fleet.git", getenv: env("GITHUB_TOKEN", "t")},
		{url: "https://github.com.evil.example/acme/fleet.git", getenv: env("GITHUB_TOKEN", "t")},
		{url: "https://ghe.example/acme/fleet.git", getenv: env("GITHUB_TOKEN", "t", "GITHUB_SERVER_URL", "https://ghe.example"), auth: true},
		{url: "https://github.com/acme/fleet.git", getenv: env("GITHUB_TOKEN", "t", "GITHUB_SERVER_URL", "https://ghe.example")},
		{url: "/srv/git/fleet.git", getenv: env("GITHUB_TOKEN", "t", "FLEETWRIGHT_FLEET_TOKEN", fleetToken)},
		{url: "git@github.com:acme/fleet.git", getenv: env("GITHUB_TOKEN", "t")},
		{url: "https://git.example/fleet.git", getenv: env("FLEETWRIGHT_FLEET_TOKEN", fleetToken), auth: true},
		{url: "http://127.0.0.1:8080/fleet.git", getenv: env("FLEETWRIGHT_FLEET_TOKEN", fleetToken), auth: true},
		{url: "http://[::1]:8080/fleet.git", getenv: env("FLEETWRIGHT_FLEET_TOKEN", fleetToken), auth: true},
		{url: "http://127.0.0.1:8080/fleet.git", getenv: env("GITHUB_TOKEN", "t")},
		{url: "http://git.example/fleet.git", getenv: env("FLEETWRIGHT_FLEET_TOKEN", fleetToken), err: true},
	} {
		s, err := sink.New(sink.Config{Mode: "push", AppsRoot: t.TempDir(), RepoURL: tc.url, Platform: plat, Getenv: tc.getenv})
		if tc.err {
			if err == nil {
				t.Errorf("%s: no error", tc.url)
			} else if strings.Contains(err.Error(), fleetToken) {
				t.Errorf("%s: the error shows the token: %v", tc.url, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if got := s.(*sink.Push).Remote.Auth != nil; got != tc.auth {
			t.Errorf("%s: token sent = %v, want %v", tc.url, got, tc.auth)
		}
	}
}
