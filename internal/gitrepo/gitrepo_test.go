package gitrepo_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
)

const (
	testUser  = "x-access-token"
	testToken = "s3cr3t-token"
)

var (
	bot   = gitrepo.Signature{Name: "fleetwright", Email: "bot@fleetwright.example"}
	epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
)

func clock() time.Time { return epoch }

// remoteFiles reads the tree of ref in the bare repository with the git CLI.
func remoteFiles(t *testing.T, bare, ref string) map[string]string {
	t.Helper()
	out := map[string]string{}
	names := strings.TrimSpace(gittest.Git(t, bare, "ls-tree", "-r", "--name-only", ref))
	if names == "" {
		return out
	}
	for _, n := range strings.Split(names, "\n") {
		out[n] = gittest.Git(t, bare, "show", ref+":"+n)
	}
	return out
}

func revParse(t *testing.T, dir, ref string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", ref))
}

func fsck(t *testing.T, dir string) {
	t.Helper()
	gittest.Git(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling")
}

func assertClean(t *testing.T, dir string) {
	t.Helper()
	if st := gittest.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("work tree %s is not clean:\n%s", dir, st)
	}
}

func bytesMap(m map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func change(msg string, files map[string]string, prefixes ...string) gitrepo.Change {
	return gitrepo.Change{
		Prefixes: prefixes,
		Files:    bytesMap(files),
		Message:  msg,
		Author:   bot,
	}
}

func TestSyncCloneAndReuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t, gittest.WithBasicAuth(testUser, testToken))
	url := srv.CreateRepo(t, "fleet.git", "main", map[string]string{
		"README.md":         "fleet\n",
		"clusters/a/x.yaml": "x: 1\n",
	})
	remote := gitrepo.Remote{URL: url, Auth: gitrepo.TokenAuth(testToken)}
	dir := filepath.Join(t.TempDir(), "clone")

	r, err := gitrepo.Sync(ctx, dir, remote, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if got := golden.ReadFiles(t, dir); !cmp.Equal(got, map[string]string{"README.md": "fleet\n", "clusters/a/x.yaml": "x: 1\n"}) {
		t.Errorf("clone work tree = %v", got)
	}
	if r.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", r.Dir(), dir)
	}

	// Another writer changes the remote; a second Sync reuses the clone.
	head := gittest.CommitFiles(t, srv.Path("fleet.git"), "main", "other writer", map[string]string{
		"clusters/a/x.yaml": "",
		"clusters/b/y.yaml": "y: 2\n",
	})
	before := len(srv.Requests())
	r, err = gitrepo.Sync(ctx, dir, remote, "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	want := map[string]string{"README.md": "fleet\n", "clusters/b/y.yaml": "y: 2\n"}
	if diff := cmp.Diff(want, golden.ReadFiles(t, dir)); diff != "" {
		t.Errorf("work tree after reuse (-want +got):\n%s", diff)
	}
	if got, err := r.Resolve("HEAD"); err != nil || got != head {
		t.Errorf("HEAD = %s, %v; want %s", got, err, head)
	}
	for _, req := range srv.Requests()[before:] {
		if strings.HasSuffix(req.Path, "/info/refs") && req.User != testUser {
			t.Errorf("request %s %s sent user %q, want %q", req.Method, req.Path, req.User, testUser)
		}
	}
	assertClean(t, dir)

	// A wrong token is refused.
	bad := gitrepo.Remote{URL: url, Auth: gitrepo.TokenAuth("wrong")}
	if _, err := gitrepo.Sync(ctx, filepath.Join(t.TempDir(), "c2"), bad, "main"); err == nil {
		t.Error("Sync with a wrong token succeeded")
	}
	// A missing branch is an error naming it.
	if _, err := gitrepo.Sync(ctx, dir, remote, "nope"); !errors.Is(err, gitrepo.ErrBranchNotFound) {
		t.Errorf("Sync(nope) error = %v, want ErrBranchNotFound", err)
	}
}

// TestSyncReuseKeepsWorkTreeExact covers both ways a reused clone is
// brought to the remote head: in place when the work tree is clean, by a
// full reset when a tracked file was edited behind its back.
func TestSyncReuseKeepsWorkTreeExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url := srv.CreateRepo(t, "fleet.git", "main", map[string]string{"a/one.yaml": "1\n", "a/two.yaml": "2\n", "b/three.yaml": "3\n"})
	bare := srv.Path("fleet.git")
	dir := t.TempDir()
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	resync := func() {
		t.Helper()
		r, err := gitrepo.Sync(ctx, dir, gitrepo.Remote{URL: url}, "main", gitrepo.WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	resync()

	gittest.CommitFiles(t, bare, "main", "move", map[string]string{"a/two.yaml": "", "b/three.yaml": "3b\n", "c/four.yaml": "4\n"})
	logs.Reset()
	resync()
	if !strings.Contains(logs.String(), "work tree moved in place") {
		t.Errorf("clean work tree was not moved in place; logs:\n%s", logs.String())
	}
	want := map[string]string{"a/one.yaml": "1\n", "b/three.yaml": "3b\n", "c/four.yaml": "4\n"}
	if diff := cmp.Diff(want, golden.ReadFiles(t, dir)); diff != "" {
		t.Errorf("work tree after in-place move (-want +got):\n%s", diff)
	}
	assertClean(t, dir)
	fsck(t, dir)

	// Someone edits a tracked file: the next sync resets it.
	if err := os.WriteFile(filepath.Join(dir, "a/one.yaml"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.CommitFiles(t, bare, "main", "more", map[string]string{"c/five.yaml": "5\n"})
	logs.Reset()
	resync()
	if !strings.Contains(logs.String(), "work tree reset") {
		t.Errorf("dirty work tree was not reset; logs:\n%s", logs.String())
	}
	want["c/five.yaml"] = "5\n"
	if diff := cmp.Diff(want, golden.ReadFiles(t, dir)); diff != "" {
		t.Errorf("work tree after reset (-want +got):\n%s", diff)
	}
	assertClean(t, dir)
}

func TestSyncFromPath(t *testing.T) {
	t.Parallel()
	srv := gittest.NewServer(t)
	srv.CreateRepo(t, "local.git", "trunk", map[string]string{"a.txt": "a\n"})
	dir := t.TempDir() // exists and is empty
	r, err := gitrepo.Sync(context.Background(), dir, gitrepo.Remote{URL: srv.Path("local.git")}, "trunk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if diff := cmp.Diff(map[string]string{"a.txt": "a\n"}, golden.ReadFiles(t, dir)); diff != "" {
		t.Errorf("work tree (-want +got):\n%s", diff)
	}
}

// A bare repository whose HEAD names a branch it does not have (made with
// one default branch, pushed another) is cloned by fetching its branches,
// over smart HTTP and from a path.
func TestSyncRemoteHeadOnMissingBranch(t *testing.T) {
	t.Parallel()
	srv := gittest.NewServer(t)
	srv.CreateRepo(t, "odd.git", "main", map[string]string{"a.txt": "a\n"})
	gittest.Git(t, srv.Path("odd.git"), "symbolic-ref", "HEAD", "refs/heads/master")
	for name, url := range map[string]string{"http": srv.RepoURL("odd.git"), "path": srv.Path("odd.git")} {
		dir := filepath.Join(t.TempDir(), "not", "yet")
		r, err := gitrepo.Sync(context.Background(), dir, gitrepo.Remote{URL: url}, "main")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(map[string]string{"a.txt": "a\n"}, golden.ReadFiles(t, dir)); diff != "" {
			t.Errorf("%s: work tree (-want +got):\n%s", name, diff)
		}
		r.Close()
	}
}

func TestTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	bare := srv.Path("apps.git")
	srv.CreateRepo(t, "apps.git", "main", map[string]string{
		"platform.yaml":          "domain: example.com\n",
		"apps/shop/api/app.yaml": "name: api\n",
		"apps/shop/web/app.yaml": "name: web\n",
	})
	first := revParse(t, bare, "main")
	gittest.Git(t, bare, "tag", "-a", "-m", "release", "v1", first)
	gittest.Git(t, bare, "tag", "light", first)
	second := gittest.CommitFiles(t, bare, "main", "change api", map[string]string{
		"apps/shop/api/app.yaml": "name: api\nreplicas: 2\n",
		"apps/shop/web/app.yaml": "",
	})
	gittest.CommitFiles(t, bare, "feature", "feature", map[string]string{"apps/blog/site/app.yaml": "name: site\n"})

	dir := t.TempDir()
	r, err := gitrepo.Sync(ctx, dir, gitrepo.Remote{URL: srv.RepoURL("apps.git")}, "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	// Tags come along with the history they point into.
	gitFetchTags(t, dir)
	onDisk := golden.ReadFiles(t, dir)

	v1 := map[string]string{
		"platform.yaml":          "domain: example.com\n",
		"apps/shop/api/app.yaml": "name: api\n",
		"apps/shop/web/app.yaml": "name: web\n",
	}
	head := map[string]string{
		"platform.yaml":          "domain: example.com\n",
		"apps/shop/api/app.yaml": "name: api\nreplicas: 2\n",
	}
	tests := []struct {
		name     string
		ref      string
		prefixes []string
		want     map[string]string
	}{
		{"branch", "main", nil, head},
		{"remote branch", "origin/main", nil, head},
		{"full hash", first, nil, v1},
		{"short hash", first[:10], nil, v1},
		{"annotated tag", "v1", nil, v1},
		{"lightweight tag", "light", nil, v1},
		{"parent revision", "HEAD~1", nil, v1},
		{"remote-only branch", "feature", []string{"apps/blog"}, map[string]string{"apps/blog/site/app.yaml": "name: site\n"}},
		{"directory prefix", second, []string{"apps/shop/"}, map[string]string{"apps/shop/api/app.yaml": "name: api\nreplicas: 2\n"}},
		{"file prefix", first, []string{"platform.yaml", "apps/shop/web"}, map[string]string{
			"platform.yaml": "domain: example.com\n", "apps/shop/web/app.yaml": "name: web\n",
		}},
		{"missing prefix", first, []string{"nothing"}, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Tree(ctx, tc.ref, tc.prefixes...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, stringMap(got)); diff != "" {
				t.Errorf("Tree(%s) (-want +got):\n%s", tc.ref, diff)
			}
		})
	}
	// The head of a pull request is fetched by its refspec.
	pr := gittest.CommitFiles(t, bare, "scratch", "pr head", map[string]string{"apps/shop/new/app.yaml": "name: new\n"})
	gittest.Git(t, bare, "update-ref", "refs/pull/7/head", pr)
	gittest.Git(t, bare, "branch", "-D", "scratch")
	if err := r.Fetch(ctx, "+refs/pull/7/head:refs/remotes/origin/pr/7"); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Tree(ctx, "origin/pr/7", "apps/shop/new"); err != nil || string(got["apps/shop/new/app.yaml"]) != "name: new\n" {
		t.Errorf("Tree(origin/pr/7) = %v, %v", stringMap(got), err)
	}
	if _, err := r.Tree(ctx, "no-such-ref"); !errors.Is(err, gitrepo.ErrRefNotFound) {
		t.Errorf("Tree(no-such-ref) error = %v, want ErrRefNotFound", err)
	}
	if _, err := r.Tree(ctx, "main", "../etc"); err == nil {
		t.Error("Tree with prefix ../etc succeeded")
	}
	if diff := cmp.Diff(onDisk, golden.ReadFiles(t, dir)); diff != "" {
		t.Errorf("Tree touched the work tree (-before +after):\n%s", diff)
	}
}

func gitFetchTags(t *testing.T, dir string) {
	t.Helper()
	gittest.Git(t, dir, "fetch", "--quiet", "--tags", "origin")
}

func stringMap(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// fleetRepo makes a remote fleet repository whose main branch holds a
// bootstrap file outside the managed prefixes and one stale managed file.
func fleetRepo(t *testing.T, srv *gittest.Server, name string) (url, bare string) {
	t.Helper()
	url = srv.CreateRepo(t, name, "main", map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml":       "kind: GitRepository\n",
		"clusters/prod/apps/shop-old.yaml":               "old\n",
		"apps/prod/shop/old/web/deployment-old-web.yaml": "old\n",
	})
	return url, srv.Path(name)
}

var prefixes = []string{"clusters/prod/apps", "apps/prod"}

// Keep spares files the change does not hold, whole folders' included;
// Describe writes the message from the paths written and deleted, which
// Result.Paths lists too.
func TestLandKeepAndDescribe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url := srv.CreateRepo(t, "fleet.git", "main", map[string]string{
		"apps/prod/shop/old/web/deployment-old-web.yaml": "generated\n",
		"apps/prod/shop/old/web/NOTES.md":                "by hand\n",
		"apps/prod/shop/api/README.md":                   "by hand\n",
		"apps/prod/shop/api/api/deployment-api-api.yaml": "generated v1\n",
	})
	r, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var asked []string
	ch := gitrepo.Change{
		Prefixes: []string{"apps/prod"},
		Files:    bytesMap(map[string]string{"apps/prod/shop/api/api/deployment-api-api.yaml": "generated v2\n"}),
		Keep: func(p string, b []byte) bool {
			asked = append(asked, p)
			return string(b) == "by hand\n"
		},
		Describe: func(paths []string) string { return "update\n\n" + strings.Join(paths, "\n") },
		Author:   bot,
	}
	res, err := r.Land(ctx, gitrepo.Target{Base: "main"}, ch)
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := []string{"apps/prod/shop/api/api/deployment-api-api.yaml", "apps/prod/shop/old/web/deployment-old-web.yaml"}
	if !slices.Equal(res.Paths, wantPaths) {
		t.Errorf("Paths = %v, want %v", res.Paths, wantPaths)
	}
	slices.Sort(asked)
	if want := []string{"apps/prod/shop/api/README.md", "apps/prod/shop/old/web/NOTES.md", "apps/prod/shop/old/web/deployment-old-web.yaml"}; !slices.Equal(asked, want) {
		t.Errorf("Keep was asked about %v, want %v", asked, want)
	}
	wantTree := map[string]string{
		"apps/prod/shop/old/web/NOTES.md":                "by hand\n",
		"apps/prod/shop/api/README.md":                   "by hand\n",
		"apps/prod/shop/api/api/deployment-api-api.yaml": "generated v2\n",
	}
	if diff := cmp.Diff(wantTree, remoteFiles(t, srv.Path("fleet.git"), "main")); diff != "" {
		t.Errorf("remote tree (-want +got):\n%s", diff)
	}
	msg := gittest.Git(t, srv.Path("fleet.git"), "log", "-1", "--format=%B", "main")
	if want := "update\n\n" + strings.Join(wantPaths, "\n") + "\n"; strings.TrimSpace(msg) != strings.TrimSpace(want) {
		t.Errorf("message %q, want %q", msg, want)
	}
}

func TestLandDirect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t, gittest.WithBasicAuth(testUser, testToken))
	url, bare := fleetRepo(t, srv, "fleet.git")
	dir := t.TempDir()
	r, err := gitrepo.Sync(ctx, dir, gitrepo.Remote{URL: url, Auth: gitrepo.TokenAuth(testToken)}, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	files := map[string]string{
		"clusters/prod/apps/shop-api.yaml":               "kind: Kustomization\n",
		"apps/prod/shop/api/api/kustomization.yaml":      "resources: [deployment-api-api.yaml]\n",
		"apps/prod/shop/api/api/deployment-api-api.yaml": "kind: Deployment\n",
	}
	ch := change("render: shop/api", files, prefixes...)
	ch.Committer = gitrepo.Signature{Name: "CI", Email: "ci@example.com", When: epoch.Add(time.Hour)}
	before := revParse(t, bare, "main")

	res, err := r.Land(ctx, gitrepo.Target{Base: "main"}, ch)
	if err != nil {
		t.Fatal(err)
	}
	want := gitrepo.Result{
		Commit: revParse(t, bare, "main"), Base: before, Changed: true, Pushed: true, Attempts: 1,
		Stats: gitrepo.Stats{Written: 3, Deleted: 2},
		Paths: []string{
			"apps/prod/shop/api/api/deployment-api-api.yaml", "apps/prod/shop/api/api/kustomization.yaml",
			"apps/prod/shop/old/web/deployment-old-web.yaml", "clusters/prod/apps/shop-api.yaml", "clusters/prod/apps/shop-old.yaml",
		},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Land result (-want +got):\n%s", diff)
	}
	wantTree := map[string]string{"clusters/prod/flux-system/gotk-sync.yaml": "kind: GitRepository\n"}
	for k, v := range files {
		wantTree[k] = v
	}
	if diff := cmp.Diff(wantTree, remoteFiles(t, bare, "main")); diff != "" {
		t.Errorf("remote tree (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantTree, golden.ReadFiles(t, dir)); diff != "" {
		t.Errorf("work tree (-want +got):\n%s", diff)
	}
	meta := gittest.Git(t, bare, "log", "-1", "--format=%an <%ae> %aI%n%cn <%ce> %cI%n%P%n%B", "main")
	wantMeta := fmt.Sprintf("fleetwright <bot@fleetwright.example> 2026-03-04T05:06:07+00:00\nCI <ci@example.com> 2026-03-04T06:06:07+00:00\n%s\nrender: shop/api\n\n", before)
	if meta != wantMeta {
		t.Errorf("commit =\n%q\nwant\n%q", meta, wantMeta)
	}
	fsck(t, bare)
	fsck(t, dir)
	assertClean(t, dir)

	// A rerun changes nothing: no commit, no push.
	stat := statFile(t, filepath.Join(dir, "apps/prod/shop/api/api/deployment-api-api.yaml"))
	res2, err := r.Land(ctx, gitrepo.Target{Base: "main"}, ch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(gitrepo.Result{Commit: want.Commit, Base: want.Commit, Attempts: 1, Stats: gitrepo.Stats{Unchanged: 3}}, res2); diff != "" {
		t.Errorf("rerun result (-want +got):\n%s", diff)
	}
	if got := revParse(t, bare, "main"); got != want.Commit {
		t.Errorf("rerun moved main to %s", got)
	}

	// Changing one file rewrites only that file.
	files["apps/prod/shop/api/api/kustomization.yaml"] = "resources: [deployment-api-api.yaml, service-api-api.yaml]\n"
	files["apps/prod/shop/api/api/service-api-api.yaml"] = "kind: Service\n"
	res3, err := r.Land(ctx, gitrepo.Target{Base: "main"}, change("render: service", files, prefixes...))
	if err != nil {
		t.Fatal(err)
	}
	if res3.Stats != (gitrepo.Stats{Written: 2, Unchanged: 2}) || !res3.Pushed {
		t.Errorf("third Land = %+v", res3)
	}
	if after := statFile(t, filepath.Join(dir, "apps/prod/shop/api/api/deployment-api-api.yaml")); !os.SameFile(stat, after) || !stat.ModTime().Equal(after.ModTime()) {
		t.Error("an unchanged file was rewritten")
	}
	if n := strings.Count(gittest.Git(t, bare, "log", "--format=%H", "main"), "\n"); n != 3 {
		t.Errorf("main has %d commits, want 3", n)
	}
	fsck(t, bare)
	fsck(t, dir)
	assertClean(t, dir)
}

func statFile(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func TestLandPullRequestBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url, bare := fleetRepo(t, srv, "fleet.git")
	r, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	target := gitrepo.Target{Base: "main", Branch: "fleetwright/render"}
	files := map[string]string{"clusters/prod/apps/shop-api.yaml": "v1\n"}
	main1 := revParse(t, bare, "main")

	res, err := r.Land(ctx, target, change("render", files, prefixes...))
	if err != nil {
		t.Fatal(err)
	}
	bot1 := revParse(t, bare, "fleetwright/render")
	if !res.Pushed || res.Commit != bot1 || res.Base != main1 {
		t.Errorf("first Land = %+v; branch at %s, main at %s", res, bot1, main1)
	}
	if got := revParse(t, bare, "fleetwright/render^"); got != main1 {
		t.Errorf("branch parent = %s, want main %s", got, main1)
	}
	if got := revParse(t, bare, "main"); got != main1 {
		t.Errorf("main moved to %s", got)
	}

	// Rerun: nothing pushed, same commit.
	res, err = r.Land(ctx, target, change("render", files, prefixes...))
	if err != nil {
		t.Fatal(err)
	}
	if res.Pushed || !res.Changed || res.Commit != bot1 || revParse(t, bare, "fleetwright/render") != bot1 {
		t.Errorf("rerun = %+v, want no push and commit %s", res, bot1)
	}
	assertClean(t, r.Dir())

	// Main moves: the branch is rebuilt on the new main.
	main2 := gittest.CommitFiles(t, bare, "main", "bootstrap", map[string]string{"clusters/prod/flux-system/extra.yaml": "x\n"})
	res, err = r.Land(ctx, target, change("render", files, prefixes...))
	if err != nil {
		t.Fatal(err)
	}
	bot2 := revParse(t, bare, "fleetwright/render")
	if !res.Pushed || bot2 == bot1 || revParse(t, bare, "fleetwright/render^") != main2 {
		t.Errorf("after main moved: %+v, branch %s", res, bot2)
	}
	want := map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml": "kind: GitRepository\n",
		"clusters/prod/flux-system/extra.yaml":     "x\n",
		"clusters/prod/apps/shop-api.yaml":         "v1\n",
	}
	if diff := cmp.Diff(want, remoteFiles(t, bare, "fleetwright/render")); diff != "" {
		t.Errorf("branch tree (-want +got):\n%s", diff)
	}

	// Someone else rewrote the branch: the lease is on the fetched value,
	// so the new content still lands.
	gittest.CommitFiles(t, bare, "fleetwright/render", "manual", map[string]string{"manual.txt": "m\n"})
	files["clusters/prod/apps/shop-api.yaml"] = "v2\n"
	res, err = r.Land(ctx, target, change("render v2", files, prefixes...))
	if err != nil {
		t.Fatal(err)
	}
	want["clusters/prod/apps/shop-api.yaml"] = "v2\n"
	if diff := cmp.Diff(want, remoteFiles(t, bare, "fleetwright/render")); diff != "" {
		t.Errorf("branch tree after v2 (-want +got):\n%s", diff)
	}
	fsck(t, bare)
	fsck(t, r.Dir())
	assertClean(t, r.Dir())

	// The change already on main: nothing to do.
	_, err = r.Land(ctx, gitrepo.Target{Base: "main"}, change("direct", files, prefixes...))
	if err != nil {
		t.Fatal(err)
	}
	res, err = r.Land(ctx, target, change("render v2", files, prefixes...))
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || res.Pushed || res.Commit != revParse(t, bare, "main") {
		t.Errorf("Land of a change already on main = %+v", res)
	}
}

// TestLandRace makes another writer push between this writer's fetch and
// its push: the push is rejected and retried on the new head.
func TestLandRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url, bare := fleetRepo(t, srv, "fleet.git")
	a, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var resB gitrepo.Result
	gitrepo.SetBeforePush(a, func(attempt int) {
		if attempt != 1 {
			return
		}
		var err error
		resB, err = b.Land(ctx, gitrepo.Target{Base: "main"}, change("writer b", map[string]string{"apps/prod/b.yaml": "b\n"}, "apps/prod/b.yaml"))
		if err != nil {
			t.Errorf("writer b: %v", err)
		}
	})
	resA, err := a.Land(ctx, gitrepo.Target{Base: "main"}, change("writer a", map[string]string{"clusters/prod/apps/a.yaml": "a\n"}, "clusters/prod/apps/a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if resA.Attempts != 2 || !resA.Pushed || resB.Attempts != 1 || !resB.Pushed {
		t.Errorf("a = %+v, b = %+v; want a retried once", resA, resB)
	}
	if got := revParse(t, bare, "main^"); got != resB.Commit {
		t.Errorf("a's commit parent = %s, want b's commit %s", got, resB.Commit)
	}
	files := remoteFiles(t, bare, "main")
	if files["apps/prod/b.yaml"] != "b\n" || files["clusters/prod/apps/a.yaml"] != "a\n" {
		t.Errorf("remote tree lost a change: %v", files)
	}
	fsck(t, bare)
	assertClean(t, a.Dir())
}

// TestLandRacePullRequestBranch: another run pushes the same change to the
// bot branch first; the loser's retry finds it in place and pushes nothing.
func TestLandRacePullRequestBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url, bare := fleetRepo(t, srv, "fleet.git")
	target := gitrepo.Target{Base: "main", Branch: "fleetwright/render"}
	ch := change("render", map[string]string{"clusters/prod/apps/x.yaml": "x\n"}, prefixes...)
	a, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(func() time.Time { return epoch.Add(time.Minute) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	// Both branches exist already, so the lease is what protects them.
	if _, err := a.Land(ctx, target, change("older", map[string]string{"clusters/prod/apps/x.yaml": "old\n"}, prefixes...)); err != nil {
		t.Fatal(err)
	}
	var resB gitrepo.Result
	gitrepo.SetBeforePush(a, func(attempt int) {
		if attempt == 1 {
			resB, err = b.Land(ctx, target, ch)
			if err != nil {
				t.Errorf("writer b: %v", err)
			}
		}
	})
	resA, err := a.Land(ctx, target, ch)
	if err != nil {
		t.Fatal(err)
	}
	if resA.Attempts != 2 || resA.Pushed || resA.Commit != resB.Commit || !resB.Pushed {
		t.Errorf("a = %+v, b = %+v; want a to find b's commit in place", resA, resB)
	}
	if got := revParse(t, bare, "fleetwright/render"); got != resB.Commit {
		t.Errorf("branch at %s, want b's %s", got, resB.Commit)
	}
}

// TestLandConcurrent runs writers at the same time without any hook; every
// change lands and history stays linear.
func TestLandConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url, bare := fleetRepo(t, srv, "fleet.git")
	const writers = 4
	repos := make([]*gitrepo.Repo, writers)
	for i := range repos {
		r, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		repos[i] = r
	}
	var wg sync.WaitGroup
	results := make([]gitrepo.Result, writers)
	errs := make([]error, writers)
	for i, r := range repos {
		wg.Go(func() {
			p := fmt.Sprintf("apps/prod/w%d.yaml", i)
			results[i], errs[i] = r.Land(ctx, gitrepo.Target{Base: "main", MaxAttempts: 2 * writers},
				change(fmt.Sprintf("writer %d", i), map[string]string{p: fmt.Sprintf("%d\n", i)}, p))
		})
	}
	wg.Wait()
	files := remoteFiles(t, bare, "main")
	for i := range writers {
		if errs[i] != nil {
			t.Errorf("writer %d: %v", i, errs[i])
		}
		if got := files[fmt.Sprintf("apps/prod/w%d.yaml", i)]; got != fmt.Sprintf("%d\n", i) {
			t.Errorf("writer %d's file = %q", i, got)
		}
	}
	if n := strings.Count(gittest.Git(t, bare, "rev-list", "--first-parent", "main"), "\n"); n != writers+1 {
		t.Errorf("main has %d commits, want %d", n, writers+1)
	}
	fsck(t, bare)
}

func TestLandBare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url, bare := fleetRepo(t, srv, "fleet.git")
	dir := t.TempDir()
	r, err := gitrepo.Sync(ctx, dir, gitrepo.Remote{URL: url}, "main", gitrepo.Bare(), gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	files := map[string]string{"clusters/prod/apps/shop-api.yaml": "v1\n", "apps/prod/shop/api/web/service-api-web.yaml": "kind: Service\n"}
	for _, target := range []gitrepo.Target{{Base: "main", Branch: "fleetwright/render"}, {Base: "main"}} {
		res, err := r.Land(ctx, target, change("render", files, prefixes...))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Pushed || res.Stats != (gitrepo.Stats{Written: 2, Deleted: 2}) {
			t.Errorf("Land(%+v) = %+v", target, res)
		}
		want := map[string]string{"clusters/prod/flux-system/gotk-sync.yaml": "kind: GitRepository\n"}
		for k, v := range files {
			want[k] = v
		}
		if diff := cmp.Diff(want, remoteFiles(t, bare, target.Base)); target.Branch == "" && diff != "" {
			t.Errorf("main (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, remoteFiles(t, bare, "fleetwright/render")); diff != "" {
			t.Errorf("branch (-want +got):\n%s", diff)
		}
	}
	res, err := r.Land(ctx, gitrepo.Target{Base: "main"}, change("render", files, prefixes...))
	if err != nil || res.Pushed || res.Changed {
		t.Errorf("rerun = %+v, %v; want nothing to do", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "clusters")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a bare clone has files checked out: %v", err)
	}
	got, err := r.Tree(ctx, "main", "clusters/prod/apps")
	if err != nil || string(got["clusters/prod/apps/shop-api.yaml"]) != "v1\n" {
		t.Errorf("Tree = %v, %v", stringMap(got), err)
	}
	fsck(t, dir)
	fsck(t, bare)
}

func TestLandEmptyRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url := srv.CreateRepo(t, "new.git", "main", nil)
	r, err := gitrepo.Sync(ctx, t.TempDir(), gitrepo.Remote{URL: url}, "main", gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	res, err := r.Land(ctx, gitrepo.Target{Base: "main"}, change("first", map[string]string{"apps/a.yaml": "a\n"}, "apps"))
	if err != nil {
		t.Fatal(err)
	}
	bare := srv.Path("new.git")
	if !res.Pushed || res.Base != "" || res.Commit != revParse(t, bare, "main") {
		t.Errorf("Land = %+v", res)
	}
	if got := strings.TrimSpace(gittest.Git(t, bare, "rev-list", "--parents", "main")); got != res.Commit {
		t.Errorf("want one root commit, rev-list says %q", got)
	}
	fsck(t, bare)
	assertClean(t, r.Dir())
}

func TestCommitLocal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	gittest.Git(t, "", "init", "--quiet", "--initial-branch=main", dir)
	r, err := gitrepo.Open(dir, gitrepo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ch := change("one", map[string]string{"out/a/b.yaml": "b\n", "out/c.yaml": "c\n"}, "out")
	h, stats, err := r.Commit(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	if stats != (gitrepo.Stats{Written: 2}) || h != revParse(t, dir, "main") {
		t.Errorf("Commit = %s, %+v", h, stats)
	}
	if _, _, err := r.Commit(ctx, ch); !errors.Is(err, gitrepo.ErrNoChange) {
		t.Errorf("second Commit error = %v, want ErrNoChange", err)
	}
	// Deleting the last file of a directory removes the directory.
	ch = change("two", map[string]string{"out/c.yaml": "c\n"}, "out")
	if _, stats, err = r.Commit(ctx, ch); err != nil || stats != (gitrepo.Stats{Deleted: 1, Unchanged: 1}) {
		t.Fatalf("third Commit = %+v, %v", stats, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out/a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("out/a still exists: %v", err)
	}
	if got := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); got != "out/c.yaml\n" {
		t.Errorf("tree = %q", got)
	}
	// A file replaces a directory and the reverse.
	ch = change("three", map[string]string{"out/c.yaml/inner": "i\n", "out/a": "file\n"}, "out")
	if _, _, err := r.Commit(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); got != "out/a\nout/c.yaml/inner\n" {
		t.Errorf("tree = %q", got)
	}
	fsck(t, dir)
	assertClean(t, dir)
}

func TestChangeValidation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, "", "init", "--quiet", dir)
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	tests := []struct {
		name string
		ch   gitrepo.Change
		want string
	}{
		{"outside prefix", change("m", map[string]string{"other/a": "a"}, "apps"), "outside the prefixes"},
		{"unclean path", change("m", map[string]string{"apps//a": "a"}, "apps"), "not clean"},
		{"dot dot", change("m", map[string]string{"apps/../a": "a"}, "apps"), "not clean"},
		{"git dir", change("m", map[string]string{"apps/.git/config": "a"}, "apps"), `".git" is not allowed`},
		{"absolute", change("m", map[string]string{"/apps/a": "a"}, "apps"), "relative"},
		{"bad prefix", change("m", nil, "../x"), "prefix"},
		{"no prefix", change("m", nil), "no prefixes"},
		{"no message", change(" ", nil, "apps"), "empty commit message"},
		{"no author", gitrepo.Change{Prefixes: []string{"apps"}, Message: "m"}, "author"},
	}
	// The cases share one Repo, which is not safe for concurrent use.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := r.Commit(context.Background(), tc.ch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Commit error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := r.Land(context.Background(), gitrepo.Target{}, change("m", nil, "apps")); err == nil {
		t.Error("Land with no base succeeded")
	}
	if _, err := r.Land(context.Background(), gitrepo.Target{Base: "main", Branch: "bad..name"}, change("m", nil, "apps")); err == nil {
		t.Error("Land to branch bad..name succeeded")
	}
}

// TreeModes tells executables and symbolic links from plain files, as a
// checkout would make them.
func TestTreeModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{"ctx/run.sh": "#!/bin/sh\n", "ctx/index.html": "hi\n"}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "ctx/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("index.html", filepath.Join(dir, "ctx/current")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.GitEnv(t, dir, []string{"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com"}, "commit", "-q", "-m", "ctx")
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	got, modes, err := r.TreeModes(context.Background(), "HEAD", "ctx")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"ctx/run.sh": "#!/bin/sh\n", "ctx/index.html": "hi\n", "ctx/current": "index.html"}, stringMap(got)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	want := map[string]fs.FileMode{"ctx/run.sh": 0o755, "ctx/current": fs.ModeSymlink | 0o777}
	if diff := cmp.Diff(want, modes); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}
