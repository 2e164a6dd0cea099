package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook"
)

var lifecycleT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// commitWorkTree commits every file of the work tree at root with go-git.
func commitWorkTree(t *testing.T, root, message string, when time.Time) string {
	t.Helper()
	r, err := git.PlainOpen(root)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(message, &git.CommitOptions{Author: &object.Signature{Name: "Carol", Email: "carol@example.com", When: when}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func headOf(t *testing.T, root string) *object.Commit {
	t.Helper()
	r, err := git.PlainOpen(root)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// history builds a Git repository with three revisions of shop/api:
// the fixture, then scaled (by render, committed), then paused with a
// notes file added (committed by hand).
func specHistory(t *testing.T) (root string, revs []string) {
	t.Helper()
	root = copyLifecycleRepo(t)
	if _, err := git.PlainInit(root, false); err != nil {
		t.Fatal(err)
	}
	revs = append(revs, commitWorkTree(t, root, "initial specs", lifecycleT0))
	env := map[string]string{"SOURCE_DATE_EPOCH": "1740834000"}
	if r := runCmd(t, env, "scale", "api", "server", "4", "--commit", "--author", "Ann <ann@example.com>", "--repo", root); r.code != 0 {
		t.Fatalf("scale: exit %d\n%s", r.code, r.stderr)
	}
	revs = append(revs, headOf(t, root).Hash.String())
	if r := runCmd(t, nil, "pause", "api", "--repo", root); r.code != 0 {
		t.Fatalf("pause: exit %d\n%s", r.code, r.stderr)
	}
	writeFiles(t, root, map[string]string{"apps/shop/api/NOTES.md": "paused for the migration\n"})
	revs = append(revs, commitWorkTree(t, root, "pause the api for the migration", lifecycleT0.Add(2*time.Hour)))
	return root, revs
}

// renderCommit renders the whole fleet from the specs of a commit.
func renderCommit(t *testing.T, root, rev string) map[string]string {
	t.Helper()
	g, err := gitrepo.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	files, err := g.Tree(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	l, err := spec.NewLoader(exports.Catalog{}, "")
	if err != nil {
		t.Fatal(err)
	}
	repo, ps := l.LoadFiles(files)
	if ps.HasErrors() {
		t.Fatalf("specs at %s are invalid:\n%v", rev, ps)
	}
	f, err := generate.Render(repo, generate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, b := range f.Map() {
		out[p] = string(b)
	}
	return out
}

func TestRollbackToFirstRevision(t *testing.T) {
	t.Parallel()
	root, revs := specHistory(t)
	r := runCmd(t, map[string]string{"SOURCE_DATE_EPOCH": "1740844800"}, "rollback", "shop/api", "--to", revs[0], "--author", "Bob <bob@example.com>", "--repo", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c := headOf(t, root)
	if len(c.ParentHashes) != 1 || c.ParentHashes[0].String() != revs[2] {
		t.Errorf("parents %v, want [%s]", c.ParentHashes, revs[2])
	}
	wantMsg := "rollback shop/api to " + revs[0][:12] + "\n\n" +
		"Restores apps/shop/api/ as it was at commit " + revs[0] + ":\n" +
		"    initial specs (Carol, 2025-03-01 12:00:00Z)\n\n" +
		"Rollback-To: " + revs[0] + "\n"
	if d := cmp.Diff(wantMsg, c.Message); d != "" {
		t.Errorf("commit message (-want +got):\n%s", d)
	}
	if c.Author.Name != "Bob" || c.Author.Email != "bob@example.com" || !c.Author.When.Equal(time.Unix(1740844800, 0)) {
		t.Errorf("author %v", c.Author)
	}
	if !strings.Contains(r.stdout, "committed "+c.Hash.String()[:12]+" rollback shop/api to "+revs[0][:12]) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	// The new commit renders the first revision's fleet byte for byte, and
	// the revision it replaces rendered something else.
	first, head := renderCommit(t, root, revs[0]), renderCommit(t, root, "HEAD")
	if d := cmp.Diff(first, head); d != "" {
		t.Errorf("fleet of the rollback commit differs from the first revision's (-first +rollback):\n%s", d)
	}
	if cmp.Equal(renderCommit(t, root, revs[2]), head) {
		t.Error("the paused revision renders the same fleet; the test proves nothing")
	}
	// The work tree holds the first revision's folder: the notes added
	// later are gone, and nothing is left to commit.
	if _, err := os.Stat(filepath.Join(root, "apps/shop/api/NOTES.md")); !os.IsNotExist(err) {
		t.Errorf("NOTES.md still in the work tree: %v", err)
	}
	if got, want := readRepoFiles(t, root)["apps/shop/api/app.yaml"], readRepoFiles(t, "testdata/lifecycle/repo")["apps/shop/api/app.yaml"]; got != want {
		t.Errorf("app.yaml in the work tree:\n%s", got)
	}
	wt := workTreeStatus(t, root)
	if !wt.IsClean() {
		t.Errorf("work tree not clean after the rollback:\n%s", wt)
	}

	// Rolling back again changes nothing.
	again := runCmd(t, nil, "rollback", "api", "--to", revs[0], "--author", "Bob <bob@example.com>", "--repo", root)
	if again.code != 0 || !strings.Contains(again.stdout, "nothing to do") || headOf(t, root).Hash != c.Hash {
		t.Errorf("second rollback: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}

	// The history lists the four revisions, newest first.
	h := runCmd(t, nil, "history", "api", "--format", "json", "--repo", root)
	if h.code != 0 {
		t.Fatalf("history: exit %d\n%s", h.code, h.stderr)
	}
	var out struct {
		Revisions []struct {
			Commit, Subject string
			Deployments     []int64
		}
		Deployments []struct {
			ID           int64
			SpecRevision string `json:"spec_revision"`
		}
	}
	if err := json.Unmarshal([]byte(h.stdout), &out); err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, rv := range out.Revisions {
		subjects = append(subjects, rv.Subject)
	}
	want := []string{"rollback shop/api to " + revs[0][:12], "pause the api for the migration", "scale shop/api server to 4 replicas", "initial specs"}
	if d := cmp.Diff(want, subjects); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
}

func workTreeStatus(t *testing.T, root string) git.Status {
	t.Helper()
	r, err := git.PlainOpen(root)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	st, err := wt.Status()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRollbackWithoutCommit(t *testing.T) {
	t.Parallel()
	root, revs := specHistory(t)
	r := runCmd(t, nil, "rollback", "api", "--to", revs[1], "--commit=false", "--repo", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if headOf(t, root).Hash.String() != revs[2] {
		t.Error("a rollback with --commit=false committed")
	}
	st := workTreeStatus(t, root)
	if st.File("apps/shop/api/app.yaml").Worktree != git.Modified || st.File("apps/shop/api/NOTES.md").Worktree != git.Deleted {
		t.Errorf("work tree status:\n%s", st)
	}
}

func TestRollbackErrors(t *testing.T) {
	t.Parallel()
	root, _ := specHistory(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rollback", "api", "--to", "no-such-ref"}, `no commit "no-such-ref"`},
		{[]string{"rollback", "api"}, "usage: render rollback"},
		{[]string{"rollback", "reports", "--to", "HEAD", "--webhook", "ftp://x"}, "--webhook must be an http(s) URL"},
	} {
		r := runCmd(t, nil, append(tt.args, "--repo", root, "--author", "B <b@example.com>")...)
		if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	// Outside Git, there is no history to roll back to.
	plain := copyLifecycleRepo(t)
	r := runCmd(t, nil, "rollback", "api", "--to", "HEAD", "--repo", plain)
	if r.code != 2 || !strings.Contains(r.stderr, "is not in a Git work tree") {
		t.Errorf("outside Git: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

func TestCommitAuthorFromEnvironment(t *testing.T) {
	t.Parallel()
	root, _ := specHistory(t)
	env := map[string]string{"GIT_AUTHOR_NAME": "Dee", "GIT_AUTHOR_EMAIL": "dee@example.com"}
	if r := runCmd(t, env, "resume", "api", "--commit", "--message", "resume after the migration", "--repo", root); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	c := headOf(t, root)
	if c.Author.Name != "Dee" || c.Author.Email != "dee@example.com" || c.Message != "resume after the migration\n" {
		t.Errorf("commit by %v: %q", c.Author, c.Message)
	}
}

// TestWebhookHistoryAndRollback reads deployments from a real webhook
// server with a SQLite history store, and rolls back to a deployment id.
func TestWebhookHistoryAndRollback(t *testing.T) {
	t.Parallel()
	root, revs := specHistory(t)
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	event := func(key, fleetRev, specRev string, at time.Time) store.Event {
		return store.Event{
			DedupeKey: key, ReceivedAt: at, EventTime: at,
			Kind: "Kustomization", Namespace: "flux-system", Name: "shop-api-server",
			Severity: "info", Reason: "ReconciliationSucceeded", Message: "Applied revision " + fleetRev,
			Revision: fleetRev, Controller: "kustomize-controller",
			Project: "shop", App: "api", Component: "server", SpecRevision: specRev,
			Health: store.HealthHealthy, Body: []byte(`{}`),
		}
	}
	var ids []int64
	for i, rev := range revs[:2] {
		at := lifecycleT0.Add(time.Duration(i) * time.Hour)
		rec, err := st.RecordEvents(ctx, []store.Event{event("k"+rev, "main@sha1:"+strings.Repeat(string(rune('a'+i)), 40), rev, at)}, at)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec[0].DeploymentID)
	}
	srv, err := webhook.New(webhook.Config{Store: st, APIToken: "s3cret", RecheckInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Stop() })
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	h := runCmd(t, nil, "history", "api", "--webhook", ts.URL, "--token-file", tokenFile, "--format", "json", "--repo", root)
	if h.code != 0 {
		t.Fatalf("history: exit %d\n%s", h.code, h.stderr)
	}
	var out struct {
		Revisions []struct {
			Commit, Subject string
			Deployments     []int64
		}
		Deployments []struct {
			ID           int64
			SpecRevision string `json:"spec_revision"`
		}
	}
	if err := json.Unmarshal([]byte(h.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Deployments) != 2 || out.Deployments[0].ID != ids[1] || out.Deployments[1].SpecRevision != revs[0] {
		t.Errorf("deployments: %+v", out.Deployments)
	}
	byCommit := map[string][]int64{}
	for _, rv := range out.Revisions {
		byCommit[rv.Commit] = rv.Deployments
	}
	if d := cmp.Diff(map[string][]int64{revs[0]: {ids[0]}, revs[1]: {ids[1]}, revs[2]: nil}, byCommit); d != "" {
		t.Errorf("deployments by revision (-want +got):\n%s", d)
	}
	text := runCmd(t, nil, "history", "api", "--webhook", ts.URL, "--token-file", tokenFile, "--repo", root)
	if text.code != 0 || !strings.Contains(text.stdout, "DEPLOYMENTS") || !strings.Contains(text.stdout, revs[0][:12]) {
		t.Errorf("text history: exit %d\n%s", text.code, text.stdout)
	}

	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("wrong"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, nil, "history", "api", "--webhook", ts.URL, "--token-file", bad, "--repo", root); r.code != 1 || !strings.Contains(r.stderr, "401 Unauthorized: missing or wrong bearer token") {
		t.Errorf("wrong token: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(text.stdout+text.stderr, "s3cret") {
		t.Error("the token was printed")
	}

	id := ids[0]
	r := runCmd(t, nil, "rollback", "api", "--to", idString(id), "--webhook", ts.URL, "--token-file", tokenFile, "--author", "Bob <bob@example.com>", "--repo", root)
	if r.code != 0 {
		t.Fatalf("rollback: exit %d\n%s", r.code, r.stderr)
	}
	c := headOf(t, root)
	subject, _, _ := strings.Cut(c.Message, "\n")
	if want := "rollback shop/api to deployment " + idString(id) + " (" + revs[0][:12] + ")"; subject != want {
		t.Errorf("subject %q, want %q", subject, want)
	}
	if !strings.Contains(c.Message, "That spec was deployed as deployment "+idString(id)+" (fleet revision main@sha1:"+strings.Repeat("a", 40)+", phase ") {
		t.Errorf("message does not name the deployment:\n%s", c.Message)
	}
	if r := runCmd(t, nil, "rollback", "api", "--to", "999", "--webhook", ts.URL, "--token-file", tokenFile, "--repo", root); r.code != 1 || !strings.Contains(r.stderr, "no deployment 999") {
		t.Errorf("unknown deployment: exit %d\n%s", r.code, r.stderr)
	}
}

func idString(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
