package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
)

var gitEnv = []string{"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com"}

func commitAll(t *testing.T, dir, msg string) string {
	t.Helper()
	gittest.GitEnv(t, dir, gitEnv, "add", "-A")
	gittest.GitEnv(t, dir, gitEnv, "commit", "-q", "-m", msg)
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

// TestReviewComment posts one comment, leaves it alone on a rerun, and
// edits it in place after another push.
func TestReviewComment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	golden.WriteFiles(t, dir, map[string]string{
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: site, type: workload, workload_spec: {image: nginx:1.27, port: 80}}]\n",
	})
	base := commitAll(t, dir, "web")
	golden.WriteFiles(t, dir, map[string]string{
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: site, type: workload, workload_spec: {image: nginx:1.28, port: 80}}]\n",
		"apps/shop/db/app.yaml":  "name: db\ncomponents: [{name: pg, type: addon, addon_spec: {type: postgresql, chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}}}]\n",
	})
	head := commitAll(t, dir, "bump and db")
	// The work tree differs from head: review must read Git, not the disk.
	golden.WriteFiles(t, dir, map[string]string{"apps/shop/web/app.yaml": "name: web\ncomponents: broken\n"})

	api := githubtest.New(t, githubtest.WithToken(landToken))
	pr := api.AddPullRequest("acme/apps", githubtest.PullRequest{Head: "feature", Base: "main", Title: "bump"})
	evPath := filepath.Join(t.TempDir(), "event.json")
	writeEvent := func(head string) {
		ev, _ := json.Marshal(map[string]any{"pull_request": map[string]any{"number": pr, "base": map[string]any{"sha": base}, "head": map[string]any{"sha": head}}})
		if err := os.WriteFile(evPath, ev, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeEvent(head)
	comments := "/repos/acme/apps/issues/" + itoa64(int64(pr)) + "/comments"
	summary := filepath.Join(t.TempDir(), "summary.md")
	env := map[string]string{
		"GITHUB_TOKEN": landToken, "GITHUB_REPOSITORY": "acme/apps", "GITHUB_EVENT_PATH": evPath,
		"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary, "GITHUB_OUTPUT": filepath.Join(t.TempDir(), "out"),
	}
	// The db's chart is on the Internet: not fetched here (internal/review/charts
	// tests rendering with repositories on loopback).
	args := []string{"review", "--charts=false", "--github-api", api.URL, "--diff-file", filepath.Join(t.TempDir(), "fleet.diff"), dir}

	api.Expect("GET", comments)
	api.Expect("POST", comments)
	r := runCmd(t, env, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	posted := api.Comments("acme/apps", pr)
	if len(posted) != 1 {
		t.Fatalf("%d comments", len(posted))
	}
	body := posted[0].Body
	for _, want := range []string{"Base `" + base[:7] + "` → head `" + head[:7] + "`.", "**1 app(s) added, 1 changed, 0 removed.**", "`nginx:1.27` | `nginx:1.28`", "flowchart LR", "<details><summary>added — HelmRelease shop/db-pg"} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%s", want, body)
		}
	}
	if s, _ := os.ReadFile(summary); !strings.Contains(string(s), "### Full diff") {
		t.Errorf("the step summary lacks the full diff:\n%s", s)
	}

	// Rerun on the same commits: reads only.
	api.Expect("GET", comments)
	n := len(api.Writes())
	if r := runCmd(t, env, args...); r.code != 0 {
		t.Fatalf("rerun: exit %d: %s", r.code, r.stderr)
	}
	if len(api.Writes()) != n {
		t.Errorf("the rerun wrote: %v", api.Writes()[n:])
	}

	// Another push: the same comment is edited.
	golden.WriteFiles(t, dir, map[string]string{"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: site, type: workload, workload_spec: {image: nginx:1.29, port: 80}}]\n"})
	head2 := commitAll(t, dir, "bump again")
	writeEvent(head2)
	api.Expect("GET", comments)
	api.Expect("PATCH", "/repos/acme/apps/issues/comments/"+itoa64(posted[0].ID))
	if r := runCmd(t, env, args...); r.code != 0 {
		t.Fatalf("push: exit %d: %s", r.code, r.stderr)
	}
	posted = api.Comments("acme/apps", pr)
	if len(posted) != 1 || !strings.Contains(posted[0].Body, "`nginx:1.29`") {
		t.Errorf("comment not edited in place: %d comments", len(posted))
	}
}

func itoa64(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
