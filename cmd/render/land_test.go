package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
)

const landToken = "ghs_testtoken"

func appsRepo(t *testing.T, platform string) string {
	t.Helper()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":          platform,
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: site, type: workload, workload_spec: {image: nginx:1.27, port: 80}}]\n",
		"apps/shop/api/app.yaml": "name: api\ncomponents: [{name: srv, type: workload, workload_spec: {image: myorg/api:1, port: 80}}]\n",
	})
	return root
}

func fsck(t *testing.T, bare string) {
	t.Helper()
	out, err := exec.Command("git", "-C", bare, "fsck", "--strict").CombinedOutput()
	if err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// TestPullRequestMode: the first render opens one pull request; a rerun
// writes nothing anywhere; a later change updates the same pull request.
func TestPullRequestMode(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{
		"README.md":                              "the fleet\n",
		"clusters/default/flux-system/gotk.yaml": "bootstrapped by flux\n",
		"apps/default/shop/notes.txt":            "hand-written, not generated\n",
	})
	api := githubtest.New(t, githubtest.WithToken(landToken))
	root := appsRepo(t, "build: {pin: false}\nfleet: {path: ., mode: pull-request}\n")
	env := map[string]string{"GITHUB_TOKEN": landToken, "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": filepath.Join(t.TempDir(), "out")}
	args := []string{"--fleet-repo", url, "--github-repo", "acme/fleet", "--github-api", api.URL, root}
	list := func() {
		api.Expect("GET", "/repos/acme/fleet/pulls").Query("head", "acme:fleetwright/render").Query("base", "main")
	}

	list()
	api.Expect("POST", "/repos/acme/fleet/pulls").JSONField("head", "fleetwright/render").JSONField("base", "main").
		JSONField("title", "fleetwright: update 2 apps")
	r := runCmd(t, env, args...)
	if r.code != 0 || !strings.Contains(r.stderr, "fleet pull request #1 opened") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	outputs, _ := os.ReadFile(env["GITHUB_OUTPUT"])
	for _, want := range []string{"changed-apps<<", "default/shop/api,default/shop/web", "pr-number<<", "pr-url<<"} {
		if !strings.Contains(string(outputs), want) {
			t.Errorf("outputs lack %q:\n%s", want, outputs)
		}
	}
	bare := gs.Path("fleet.git")
	fsck(t, bare)
	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "fleetwright/render")
	for _, want := range []string{"apps/default/shop/web/site/deployment-web-site.yaml", "clusters/default/apps/shop-api.yaml", "apps/default/shop/notes.txt", "clusters/default/flux-system/gotk.yaml"} {
		if !strings.Contains(files, want+"\n") {
			t.Errorf("the pull request branch lacks %s:\n%s", want, files)
		}
	}
	headBefore := gittest.Git(t, bare, "rev-parse", "fleetwright/render")

	// A rerun with nothing new: reads only, pushes nothing.
	list()
	before := len(api.Writes())
	if r := runCmd(t, env, args...); r.code != 0 || !strings.Contains(r.stderr, "up to date") {
		t.Fatalf("rerun: exit %d: %s", r.code, r.stderr)
	}
	if len(api.Writes()) != before {
		t.Errorf("the rerun wrote to GitHub: %v", api.Writes()[before:])
	}
	if got := gittest.Git(t, bare, "rev-parse", "fleetwright/render"); got != headBefore {
		t.Errorf("the rerun pushed a new commit")
	}

	// A change to one app updates the same branch and pull request (its
	// title still names both apps: neither is on main yet).
	golden.WriteFiles(t, root, map[string]string{"apps/shop/api/app.yaml": "name: api\ncomponents: [{name: srv, type: workload, workload_spec: {image: myorg/api:2, port: 80}}]\n"})
	list()
	if r := runCmd(t, env, args...); r.code != 0 || !strings.Contains(r.stderr, "fleet pull request #1") {
		t.Fatalf("change: exit %d: %s", r.code, r.stderr)
	}
	if got := gittest.Git(t, bare, "rev-parse", "fleetwright/render"); got == headBefore {
		t.Error("the change was not pushed to the pull request branch")
	}

	// Once the fleet is on main, the next change names only its app, and
	// the pull request is edited to say so.
	gittest.Git(t, bare, "update-ref", "refs/heads/main", "refs/heads/fleetwright/render")
	golden.WriteFiles(t, root, map[string]string{"apps/shop/api/app.yaml": "name: api\ncomponents: [{name: srv, type: workload, workload_spec: {image: myorg/api:3, port: 80}}]\n"})
	list()
	api.Expect("PATCH", "/repos/acme/fleet/pulls/1").JSONField("title", "fleetwright: update default/shop/api")
	if r := runCmd(t, env, args...); r.code != 0 || !strings.Contains(r.stderr, "#1 updated") {
		t.Fatalf("change: exit %d: %s", r.code, r.stderr)
	}
	if n := len(api.PullRequests("acme/fleet")); n != 1 {
		t.Errorf("%d pull requests", n)
	}
	fsck(t, bare)
	dep := gittest.Git(t, bare, "show", "fleetwright/render:apps/default/shop/api/srv/deployment-api-srv.yaml")
	if !strings.Contains(dep, "image: myorg/api:3") {
		t.Errorf("the branch does not hold the change:\n%s", dep)
	}
}

// TestFleetInAppsRepoNotAmongSpecs: with no fleet repository the fleet
// goes to the apps repository's origin, and never into its specs.
func TestFleetInAppsRepoNotAmongSpecs(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "apps.git", "main", map[string]string{"README.md": "apps\n"})
	root := appsRepo(t, "build: {pin: false}\nfleet: {path: ., mode: push}\n")
	gittest.Git(t, root, "init", "-q", "-b", "main")
	gittest.Git(t, root, "remote", "add", "origin", url)
	r := runCmd(t, nil, root)
	if r.code != 2 || !strings.Contains(r.stderr, "mix with the specs: its root holds the specs in apps/") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if log := gittest.Git(t, gs.Path("apps.git"), "log", "--oneline", "main"); strings.Count(log, "\n") != 1 {
		t.Errorf("something was pushed:\n%s", log)
	}
}

// TestPushMode pushes straight to the branch; a rerun makes no commit.
func TestPushMode(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{"README.md": "fleet\n"})
	root := appsRepo(t, "build: {pin: false}\nfleet: {path: deploy, mode: push}\n")
	r := runCmd(t, nil, "--fleet-repo", url, root)
	if r.code != 0 || !strings.Contains(r.stderr, "pushed") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	bare := gs.Path("fleet.git")
	fsck(t, bare)
	msg := gittest.Git(t, bare, "log", "-1", "--format=%B", "main")
	if !strings.Contains(msg, "fleetwright: update 2 apps") || !strings.Contains(msg, "- default/shop/web") {
		t.Errorf("commit message:\n%s", msg)
	}
	k := gittest.Git(t, bare, "show", "main:deploy/clusters/default/apps/shop-web.yaml")
	if !strings.Contains(k, "path: ./deploy/apps/default/shop/web/site") {
		t.Errorf("Flux paths do not include the fleet folder:\n%s", k)
	}
	head := gittest.Git(t, bare, "rev-parse", "main")
	if r := runCmd(t, nil, "--fleet-repo", url, root); r.code != 0 || !strings.Contains(r.stderr, "up to date") {
		t.Fatalf("rerun: exit %d: %s", r.code, r.stderr)
	}
	if got := gittest.Git(t, bare, "rev-parse", "main"); got != head {
		t.Error("a rerun pushed a commit")
	}
	// Removing an app removes its files.
	if err := os.RemoveAll(filepath.Join(root, "apps/shop/web")); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, nil, "--fleet-repo", url, root); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	if strings.Contains(files, "shop/web") || !strings.Contains(files, "README.md") {
		t.Errorf("after removing the app:\n%s", files)
	}
}

// TestPushModeCheckAndDiff: --check and --diff compare the fleet with the
// fleet branch, print the diff with the paths of the repository, and push
// nothing.
func TestPushModeCheckAndDiff(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{"README.md": "fleet\n"})
	bare := gs.Path("fleet.git")
	root := appsRepo(t, "build: {pin: false}\nfleet: {path: deploy, mode: push}\n")
	head := gittest.Git(t, bare, "rev-parse", "main")
	dep := "deploy/apps/default/shop/web/site/deployment-web-site.yaml"

	r := runCmd(t, nil, "--check", "--fleet-repo", url, root)
	if r.code != 1 || !strings.Contains(r.stderr, "the fleet on main differs from the specs in ") {
		t.Fatalf("check before the first push: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "--- /dev/null\n+++ "+dep+"\n") || !strings.Contains(r.stdout, "+      - image: nginx:1.27\n") {
		t.Errorf("check diff lacks the new Deployment:\n%s", r.stdout)
	}
	d := runCmd(t, nil, "--diff", "--fleet-repo", url, root)
	if d.code != 1 || d.stdout != r.stdout {
		t.Errorf("diff: exit %d, and its diff differs from the check's:\n%s", d.code, d.stdout)
	}
	if got := gittest.Git(t, bare, "rev-parse", "main"); got != head {
		t.Fatal("check or diff pushed a commit")
	}

	if r := runCmd(t, nil, "--fleet-repo", url, root); r.code != 0 {
		t.Fatalf("push: exit %d: %s", r.code, r.stderr)
	}
	r = runCmd(t, nil, "--check", "--fleet-repo", url, root)
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "the fleet on main is up to date (") {
		t.Fatalf("check after the push: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	// An edit on the branch by hand is found and shown; a file render did
	// not generate is left out.
	orig := gittest.Git(t, bare, "show", "main:"+dep)
	gittest.CommitFiles(t, bare, "main", "by hand", map[string]string{
		dep:                                  strings.Replace(orig, "nginx:1.27", "nginx:1.28", 1),
		"deploy/apps/default/shop/notes.txt": "by hand\n",
	})
	head = gittest.Git(t, bare, "rev-parse", "main")
	r = runCmd(t, nil, "--check", "--fleet-repo", url, root)
	want := "--- " + dep + "\n+++ " + dep + "\n"
	if r.code != 1 || !strings.HasPrefix(r.stdout, want) || strings.Count(r.stdout, "+++ ") != 1 ||
		!strings.Contains(r.stdout, "-      - image: nginx:1.28\n+      - image: nginx:1.27\n") {
		t.Errorf("check of an edited branch: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "differs from the specs in 1 file(s)") {
		t.Errorf("check of an edited branch: %s", r.stderr)
	}
	if got := gittest.Git(t, bare, "rev-parse", "main"); got != head {
		t.Error("check pushed a commit")
	}
}

// TestPullRequestModeCheckAndDiff: in pull-request mode --check and --diff
// compare with the fleet branch, not the pull request's, and neither push
// nor ask GitHub anything (the fake fails on any call).
func TestPullRequestModeCheckAndDiff(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{"README.md": "fleet\n"})
	bare := gs.Path("fleet.git")
	api := githubtest.New(t, githubtest.WithToken(landToken))
	root := appsRepo(t, "build: {pin: false}\nfleet: {path: ., mode: pull-request}\n")
	env := map[string]string{"GITHUB_TOKEN": landToken}
	args := []string{"--fleet-repo", url, "--github-repo", "acme/fleet", "--github-api", api.URL, root}
	dep := "apps/default/shop/api/srv/deployment-api-srv.yaml"

	r := runCmd(t, env, append([]string{"--check"}, args...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "+++ "+dep+"\n") || !strings.Contains(r.stderr, "the fleet on main differs") {
		t.Fatalf("check: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// No GitHub repository is needed to compare.
	d := runCmd(t, env, "--diff", "--fleet-repo", url, root)
	if d.code != 1 || d.stdout != r.stdout {
		t.Errorf("diff: exit %d: %s\n%s", d.code, d.stderr, d.stdout)
	}
	if refs := gittest.Git(t, bare, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main\n" {
		t.Errorf("check or diff pushed: %s", refs)
	}

	// The fleet on the pull request's branch is not yet on main.
	api.Expect("GET", "/repos/acme/fleet/pulls")
	api.Expect("POST", "/repos/acme/fleet/pulls")
	if r := runCmd(t, env, args...); r.code != 0 || !strings.Contains(r.stderr, "fleet pull request #1 opened") {
		t.Fatalf("render: exit %d: %s", r.code, r.stderr)
	}
	if r := runCmd(t, env, append([]string{"--check"}, args...)...); r.code != 1 || !strings.Contains(r.stdout, "+++ "+dep+"\n") {
		t.Errorf("check against main before the merge: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	gittest.Git(t, bare, "update-ref", "refs/heads/main", "refs/heads/fleetwright/render")
	if r := runCmd(t, env, append([]string{"--check"}, args...)...); r.code != 0 || !strings.Contains(r.stderr, "the fleet on main is up to date") {
		t.Errorf("check after the merge: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := len(api.Writes()); n != 1 {
		t.Errorf("%d writes to GitHub, want the one that opened the pull request", n)
	}
}

// FLEETWRIGHT_FLEET_TOKEN, the fleet repository's own token (a GitHub
// App's, say), pushes to the fleet repository and opens its pull request;
// the workflow's GITHUB_TOKEN is used for neither.
func TestPullRequestModeFleetToken(t *testing.T) {
	t.Parallel()
	const fleetToken = "fleet-app-token"
	gs := gittest.NewServer(t, gittest.WithBasicAuth("x-access-token", fleetToken))
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{"README.md": "the fleet\n"})
	api := githubtest.New(t, githubtest.WithToken(fleetToken))
	root := appsRepo(t, "build: {pin: false}\nfleet: {path: ., mode: pull-request}\n")
	env := map[string]string{"GITHUB_TOKEN": landToken, "FLEETWRIGHT_FLEET_TOKEN": fleetToken}
	api.Expect("GET", "/repos/acme/fleet/pulls").Query("head", "acme:fleetwright/render").Query("base", "main")
	api.Expect("POST", "/repos/acme/fleet/pulls").JSONField("head", "fleetwright/render")
	r := runCmd(t, env, "--fleet-repo", url, "--github-repo", "acme/fleet", "--github-api", api.URL, root)
	if r.code != 0 || !strings.Contains(r.stderr, "fleet pull request #1 opened") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, fleetToken) {
		t.Errorf("the token was printed:\n%s%s", r.stdout, r.stderr)
	}
	if files := gittest.Git(t, gs.Path("fleet.git"), "ls-tree", "-r", "--name-only", "fleetwright/render"); !strings.Contains(files, "clusters/default/apps/shop-api.yaml\n") {
		t.Errorf("the pull request branch lacks the fleet:\n%s", files)
	}
}
