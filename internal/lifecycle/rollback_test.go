package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a fixed clock at the Unix time sec.
func clock(sec int64) func() time.Time {
	return func() time.Time { return time.Unix(sec, 0).UTC() }
}

// commitWorkTree commits every file of the work tree at root as Carol
// with the git CLI.
func commitWorkTree(t *testing.T, root, message string, when time.Time) string {
	t.Helper()
	date := when.Format(time.RFC3339)
	env := []string{"GIT_AUTHOR_NAME=Carol", "GIT_AUTHOR_EMAIL=carol@example.com", "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	gittest.Git(t, root, "add", "--all")
	gittest.GitEnv(t, root, env, "commit", "--quiet", "-m", message)
	return strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))
}

// commit is a commit as git cat-file shows it.
type commit struct {
	hash, author, message string
	parents               []string
	when                  time.Time
}

func headOf(t *testing.T, root string) commit {
	t.Helper()
	c := commit{hash: strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))}
	head, msg, _ := strings.Cut(gittest.Git(t, root, "cat-file", "commit", "HEAD"), "\n\n")
	c.message = msg
	for line := range strings.Lines(head) {
		key, val, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		switch key {
		case "parent":
			c.parents = append(c.parents, val)
		case "author":
			// Name <email> seconds zone
			f := strings.Fields(val)
			sec, _ := strconv.ParseInt(f[len(f)-2], 10, 64)
			c.author, c.when = strings.Join(f[:len(f)-2], " "), time.Unix(sec, 0).UTC()
		}
	}
	return c
}

func status(t *testing.T, root string) string {
	t.Helper()
	return gittest.Git(t, root, "status", "--porcelain")
}

// commitChange makes an edit and commits it.
func commitChange(t *testing.T, o lifecycle.Options, e edit, author string) lifecycle.Applied {
	t.Helper()
	ch, err := e(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lifecycle.Apply(context.Background(), o, ch, lifecycle.ApplyOptions{Commit: true, Author: author})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// specHistory builds a Git repository with three revisions of shop/api:
// the fixture, then scaled (committed by Apply), then paused with a notes
// file added (committed by hand).
func specHistory(t *testing.T) (root string, revs []string) {
	t.Helper()
	root = copyRepo(t)
	gittest.Git(t, root, "init", "--quiet", "--initial-branch=main")
	revs = append(revs, commitWorkTree(t, root, "initial specs", t0))
	res := commitChange(t, lifecycle.Options{Repo: root, Now: clock(1740834000)}, scale("api", "server", 4), "Ann <ann@example.com>")
	revs = append(revs, res.Commit)
	run(t, root, pause("api"))
	golden.WriteFiles(t, root, map[string]string{"apps/shop/api/NOTES.md": "paused for the migration\n"})
	revs = append(revs, commitWorkTree(t, root, "pause the api for the migration", t0.Add(2*time.Hour)))
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
	repo := spectest.LoadFiles(t, files)
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
	ctx := context.Background()
	root, revs := specHistory(t)
	o := lifecycle.Options{Repo: root, App: "shop/api", Now: clock(1740844800)}
	ch, err := lifecycle.Rollback(ctx, o, revs[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := "restored shop/api to " + revs[0][:12] + " (" + root + "/apps/shop/api/)"; ch.Done != want {
		t.Errorf("Done %q, want %q", ch.Done, want)
	}
	res, err := lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{Commit: true, Author: "Bob <bob@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	c := headOf(t, root)
	if !slices.Equal(c.parents, []string{revs[2]}) {
		t.Errorf("parents %v, want [%s]", c.parents, revs[2])
	}
	wantMsg := "rollback shop/api to " + revs[0][:12] + "\n\n" +
		"Restores apps/shop/api/ as it was at commit " + revs[0] + ":\n" +
		"    initial specs (Carol, 2025-03-01 12:00:00Z)\n\n" +
		"Rollback-To: " + revs[0] + "\n"
	if d := cmp.Diff(wantMsg, c.message); d != "" {
		t.Errorf("commit message (-want +got):\n%s", d)
	}
	if c.author != "Bob <bob@example.com>" || !c.when.Equal(time.Unix(1740844800, 0)) {
		t.Errorf("author %q at %v", c.author, c.when)
	}
	if res.Commit != c.hash || res.Subject != "rollback shop/api to "+revs[0][:12] || res.AlreadyCommitted {
		t.Errorf("Apply = %+v, HEAD is %s", res, c.hash)
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
	if got, want := golden.ReadFiles(t, root)["apps/shop/api/app.yaml"], golden.ReadFiles(t, "testdata/repo")["apps/shop/api/app.yaml"]; got != want {
		t.Errorf("app.yaml in the work tree:\n%s", got)
	}
	if st := status(t, root); st != "" {
		t.Errorf("work tree not clean after the rollback:\n%s", st)
	}

	// Rolling back again changes nothing.
	again, err := lifecycle.Rollback(ctx, lifecycle.Options{Repo: root, App: "api"}, revs[0])
	if err != nil || !again.Empty() || again.Done != "shop/api is already as it was at "+revs[0][:12]+"; nothing to do" {
		t.Errorf("second rollback = %+v, %v", again, err)
	}

	// The history lists the four revisions, newest first.
	h, err := lifecycle.ReadHistory(ctx, lifecycle.Options{Repo: root, App: "api"}, 50)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, rv := range h.Revisions {
		subjects = append(subjects, rv.Subject)
	}
	want := []string{"rollback shop/api to " + revs[0][:12], "pause the api for the migration", "scale shop/api server to 4 replicas", "initial specs"}
	if d := cmp.Diff(want, subjects); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
	if h.App != "shop/api" || h.File != root+"/apps/shop/api/app.yaml" || !slices.Equal(h.Paths, []string{"apps/shop/api"}) || len(h.Deployments) != 0 {
		t.Errorf("history of %s (%s) over %v, %d deployments", h.App, h.File, h.Paths, len(h.Deployments))
	}
	if r := h.Revisions[2]; r.Author != "Ann" || r.AuthorEmail != "ann@example.com" || !r.Date.Equal(time.Unix(1740834000, 0)) {
		t.Errorf("scale revision %+v", r)
	}
}

func TestRollbackWithoutCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, revs := specHistory(t)
	o := lifecycle.Options{Repo: root, App: "api"}
	ch, err := lifecycle.Rollback(ctx, o, revs[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if headOf(t, root).hash != revs[2] {
		t.Error("a rollback without Commit committed")
	}
	if got, want := status(t, root), " D apps/shop/api/NOTES.md\n M apps/shop/api/app.yaml\n"; got != want {
		t.Errorf("work tree status %q, want %q", got, want)
	}
}

// TestRollbackTemplateChanged checks the warning that a rollback does not
// restore the template the app uses.
func TestRollbackTemplateChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, revs := specHistory(t)
	files := golden.ReadFiles(t, root)
	golden.WriteFiles(t, root, map[string]string{
		"templates/worker/template.yaml": files["templates/worker/template.yaml"] + "# changed\n",
		"apps/shop/jobs/app.yaml":        files["apps/shop/jobs/app.yaml"] + "# changed\n",
	})
	commitWorkTree(t, root, "change the worker template", t0.Add(3*time.Hour))
	var log bytes.Buffer
	o := lifecycle.Options{Repo: root, App: "jobs", Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if _, err := lifecycle.Rollback(ctx, o, revs[0]); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`level=WARN msg="template worker changed since %s; the rollback restores %s/apps/shop/jobs only, and the app renders with the template as it is now"`, revs[0][:12], root)
	if !strings.Contains(log.String(), want) {
		t.Errorf("log:\n%s\nwant it to hold:\n%s", log.String(), want)
	}
	h, err := lifecycle.ReadHistory(ctx, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Paths, []string{"apps/shop/jobs", "templates/worker"}) || len(h.Revisions) != 2 || h.Revisions[0].Subject != "change the worker template" {
		t.Errorf("history over %v: %+v", h.Paths, h.Revisions)
	}
}

func TestRollbackErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, _ := specHistory(t)
	var refused *lifecycle.RefusedError
	_, err := lifecycle.Rollback(ctx, lifecycle.Options{Repo: root, App: "api"}, "no-such-ref")
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), `no commit "no-such-ref"`) || !errors.Is(err, gitrepo.ErrRefNotFound) {
		t.Errorf("unknown ref: %v", err)
	}
	// An app added after the revision did not exist then.
	run(t, root, newApp(lifecycle.NewApp{Name: "blog", Image: "nginx:1.27"}))
	first := strings.TrimSpace(gittest.Git(t, root, "rev-list", "--max-parents=0", "HEAD"))
	commitWorkTree(t, root, "add blog", t0.Add(3*time.Hour))
	if _, err := lifecycle.Rollback(ctx, lifecycle.Options{Repo: root, App: "blog"}, first); !errors.As(err, &refused) || !strings.Contains(err.Error(), "apps/shop/blog did not exist at "+first[:12]) {
		t.Errorf("app that did not exist: %v", err)
	}
	// Outside Git, there is no history to roll back to.
	plain := copyRepo(t)
	for name, f := range map[string]func() error{
		"rollback": func() error {
			_, err := lifecycle.Rollback(ctx, lifecycle.Options{Repo: plain, App: "api"}, "HEAD")
			return err
		},
		"history": func() error {
			_, err := lifecycle.ReadHistory(ctx, lifecycle.Options{Repo: plain, App: "api"}, 0)
			return err
		},
		"commit": func() error {
			_, err := lifecycle.Apply(ctx, lifecycle.Options{}, run(t, plain, del("reports")), lifecycle.ApplyOptions{Commit: true})
			return err
		},
	} {
		if err := f(); err == nil || errors.As(err, &refused) || !strings.Contains(err.Error(), plain+" is not in a Git work tree") {
			t.Errorf("%s outside Git: %v", name, err)
		}
	}
}

// TestCommitAuthor checks where Apply takes the author from. It changes
// HOME, so that no global Git configuration names one, and so does not
// run in parallel.
func TestCommitAuthor(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	tests := []struct {
		name   string
		env    map[string]string
		config bool // git config user.name and user.email in the repository
		author string
		want   string
		err    error
	}{
		{name: "given", author: "Bea <bea@example.com>", env: map[string]string{"GIT_AUTHOR_NAME": "Dee", "GIT_AUTHOR_EMAIL": "dee@example.com"}, want: "Bea <bea@example.com>"},
		{name: "environment", env: map[string]string{"GIT_AUTHOR_NAME": "Dee", "GIT_AUTHOR_EMAIL": "dee@example.com"}, config: true, want: "Dee <dee@example.com>"},
		{name: "git config", config: true, env: map[string]string{"GITHUB_ACTIONS": "true", "GIT_AUTHOR_NAME": "Dee"}, want: "Erin <erin@example.com>"},
		{name: "GitHub Actions", env: map[string]string{"GITHUB_ACTIONS": "true"}, want: "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"},
		{name: "none", err: lifecycle.ErrNoAuthor},
		{name: "malformed", author: "Bea", err: lifecycle.ErrBadAuthor},
		{name: "no email", author: "Bea <>", err: lifecycle.ErrBadAuthor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, revs := specHistory(t)
			if tt.config {
				gittest.Git(t, root, "config", "user.name", "Erin")
				gittest.Git(t, root, "config", "user.email", "erin@example.com")
			}
			ctx := context.Background()
			o := lifecycle.Options{Repo: root, App: "api", Getenv: func(k string) string { return tt.env[k] }}
			ch, err := lifecycle.Resume(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{Commit: true, Author: tt.author, Message: "resume after the migration"})
			if tt.err != nil {
				if !errors.Is(err, tt.err) || headOf(t, root).hash != revs[2] {
					t.Errorf("error %v, want %v and no commit", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := headOf(t, root)
			if c.author != tt.want || c.message != "resume after the migration\n" {
				t.Errorf("commit by %q: %q; want %q", c.author, c.message, tt.want)
			}
		})
	}
}

// TestCommitAlreadyHeld checks that a change HEAD already holds is
// written to the work tree, and not committed.
func TestCommitAlreadyHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, revs := specHistory(t)
	o := lifecycle.Options{Repo: root, App: "api"}
	ch, err := lifecycle.Resume(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	// Commit the change, put the work tree's spec back as it was, and
	// apply the change again: HEAD holds it already.
	if _, err := lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{Commit: true, Author: "B <b@example.com>"}); err != nil {
		t.Fatal(err)
	}
	resumed := headOf(t, root).hash
	if resumed == revs[2] {
		t.Fatal("nothing was committed")
	}
	golden.WriteFiles(t, root, map[string]string{"apps/shop/api/app.yaml": gittest.Git(t, root, "show", revs[2]+":apps/shop/api/app.yaml")})
	if status(t, root) == "" {
		t.Fatal("the work tree's spec was not put back")
	}
	res, err := lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{Commit: true, Author: "B <b@example.com>"})
	if err != nil || !res.AlreadyCommitted || res.Commit != "" || headOf(t, root).hash != resumed {
		t.Errorf("Apply = %+v, %v; HEAD %s, want %s", res, err, headOf(t, root).hash, resumed)
	}
	if st := status(t, root); st != "" {
		t.Errorf("the change was not written back to the work tree:\n%s", st)
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
			App: layout.AppRef{Project: "shop", Name: "api"}, Component: "server", SpecRevision: specRev,
			Health: store.HealthHealthy, Body: []byte(`{}`),
		}
	}
	var ids []int64
	for i, rev := range []string{revs[0], revs[1], ""} {
		at := t0.Add(time.Duration(i) * time.Hour)
		rec, err := st.RecordEvents(ctx, []store.Event{event(fmt.Sprint("k", i), "main@sha1:"+strings.Repeat(string(rune('a'+i)), 40), rev, at)}, at)
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
	client, err := api.NewClient(ts.URL, "s3cret", ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	o := lifecycle.Options{Repo: root, App: "api", Deployments: client}

	h, err := lifecycle.ReadHistory(ctx, o, 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, d := range h.Deployments {
		got = append(got, d.ID)
	}
	if d := cmp.Diff([]int64{ids[2], ids[1], ids[0]}, got); d != "" || h.Deployments[2].SpecRevision != revs[0] {
		t.Errorf("deployments (-want +got):\n%s", d)
	}
	byCommit := map[string][]int64{}
	for _, rv := range h.Revisions {
		byCommit[rv.Commit] = rv.Deployments
	}
	if d := cmp.Diff(map[string][]int64{revs[0]: {ids[0]}, revs[1]: {ids[1]}, revs[2]: nil}, byCommit); d != "" {
		t.Errorf("deployments by revision (-want +got):\n%s", d)
	}
	// As JSON, a deployment shows the fields that place it, not the
	// webhook's checks and components.
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Deployments []map[string]any `json:"deployments"`
		Revisions   []map[string]any `json:"revisions"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
	if d := cmp.Diff([]string{"finished_at", "id", "message", "phase", "revision", "spec_revision", "started_at"}, keys(out.Deployments[2])); d != "" {
		t.Errorf("keys of a deployment in JSON (-want +got):\n%s\n%s", d, b)
	}
	if d := cmp.Diff([]string{"author", "author_email", "commit", "date", "deployments", "message", "subject"}, keys(out.Revisions[2])); d != "" {
		t.Errorf("keys of a revision in JSON (-want +got):\n%s\n%s", d, b)
	}

	// A deployment id names the spec revision to restore.
	id := ids[0]
	ch, err := lifecycle.Rollback(ctx, o, fmt.Sprint(id))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("rollback shop/api to deployment %d (%s)", id, revs[0][:12]); ch.Subject != want {
		t.Errorf("subject %q, want %q", ch.Subject, want)
	}
	if want := fmt.Sprintf("That spec was deployed as deployment %d (fleet revision main@sha1:%s, phase ", id, strings.Repeat("a", 40)); !strings.Contains(ch.Body, want) {
		t.Errorf("message does not name the deployment:\n%s", ch.Body)
	}
	var refused *lifecycle.RefusedError
	if _, err := lifecycle.Rollback(ctx, o, "999"); !errors.Is(err, lifecycle.ErrNoDeployment) || !errors.As(err, &refused) || !strings.Contains(err.Error(), "no deployment 999 of shop/api") {
		t.Errorf("unknown deployment: %v", err)
	}
	if _, err := lifecycle.Rollback(ctx, o, fmt.Sprint(ids[2])); err == nil || !strings.Contains(err.Error(), "recorded no spec revision") {
		t.Errorf("deployment without a spec revision: %v", err)
	}
	// Without the token the webhook refuses, and the error says so.
	anon, err := api.NewClient(ts.URL, "", ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	o.Deployments = anon
	if _, err := lifecycle.ReadHistory(ctx, o, 50); !errors.As(err, &refused) || !strings.Contains(err.Error(), "401 Unauthorized: missing or wrong bearer token") {
		t.Errorf("no token: %v", err)
	}
}
