package revision

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

var env = []string{"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com"}

func write(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	golden.WriteFiles(t, dir, files)
	gittest.GitEnv(t, dir, env, "add", "-A")
	// Distinct commit times, so "newest" is well defined.
	n := strings.Count(gittest.Git(t, dir, "log", "--oneline", "--all"), "\n")
	date := "2026-01-0" + string(rune('1'+n)) + "T00:00:00Z"
	gittest.GitEnv(t, dir, append(env, "GIT_COMMITTER_DATE="+date, "GIT_AUTHOR_DATE="+date), "commit", "-q", "-m", "change")
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	root := filepath.Join(dir, "repo")
	first := write(t, dir, map[string]string{
		"repo/apps/shop/a/app.yaml":        "name: a\ncomponents: [{name: w, type: workload, workload_spec: {image: x:1}}]\n",
		"repo/apps/shop/b/app.yaml":        "name: b\ntemplate: {name: web, parameters: {image: x:1}}\n",
		"repo/templates/web/template.yaml": "name: web\nversion: \"1\"\nparameters:\n  - {name: image, type: string, required: true}\ncomponents:\n  - {name: w, type: workload, workload_spec: {image: \"${{ params.image }}\"}}\n",
	})
	second := write(t, dir, map[string]string{"repo/templates/web/template.yaml": "name: web\nversion: \"1\"\nparameters:\n  - {name: image, type: string, required: true}\ncomponents:\n  - {name: w, type: workload, workload_spec: {image: \"${{ params.image }}\", port: 80}}\n"})
	write(t, dir, map[string]string{"README.md": "unrelated\n"})

	repo := spectest.Load(t, root)
	revs, err := Specs(context.Background(), root, "HEAD", repo)
	if err != nil || revs == nil {
		t.Fatalf("no revisions: %v", err)
	}
	got := map[string]string{}
	for _, a := range repo.Apps {
		got[a.Spec.Name] = revs(a)
	}
	// a was last changed by the first commit; b by its template's change;
	// the unrelated last commit moves neither.
	if got["a"] != first || got["b"] != second {
		t.Errorf("revisions = %v; want a=%s b=%s", got, first, second)
	}
	if r, err := Specs(context.Background(), t.TempDir(), "HEAD", repo); r != nil || err != nil {
		t.Errorf("outside Git: got revisions (%v), err %v", r != nil, err)
	}
}
