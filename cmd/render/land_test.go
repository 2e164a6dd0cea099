package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
)

const landToken = "ghs_testtoken"

func appsRepo(t *testing.T, platform string) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
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
	writeFiles(t, root, map[string]string{"apps/shop/api/app.yaml": "name: api\ncomponents: [{name: srv, type: workload, workload_spec: {image: myorg/api:2, port: 80}}]\n"})
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
	writeFiles(t, root, map[string]string{"apps/shop/api/app.yaml": "name: api\ncomponents: [{name: srv, type: workload, workload_spec: {image: myorg/api:3, port: 80}}]\n"})
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

// TestPushMode pushes straight to the branch; a rerun makes no commit.
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
