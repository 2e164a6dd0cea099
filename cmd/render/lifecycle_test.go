package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook"
)

// The lifecycle verbs' logic is tested in internal/lifecycle; these tests
// check their flags and what they print.

// copyLifecycleRepo copies the lifecycle package's test repository into a
// temporary folder.
func copyLifecycleRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join("..", "..", "internal", "lifecycle", "testdata", "repo")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		golden.WriteFiles(t, root, map[string]string{filepath.ToSlash(rel): string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// gitLifecycleRepo is copyLifecycleRepo committed, then scaled by render
// with --commit: two revisions of shop/api with fixed hashes.
func gitLifecycleRepo(t *testing.T) string {
	t.Helper()
	root := copyLifecycleRepo(t)
	gittest.Git(t, root, "init", "--quiet", "--initial-branch=main")
	gittest.Git(t, root, "add", "--all")
	gittest.GitEnv(t, root, []string{"GIT_AUTHOR_NAME=Carol", "GIT_AUTHOR_EMAIL=carol@example.com", "GIT_AUTHOR_DATE=2025-03-01T12:00:00Z", "GIT_COMMITTER_DATE=2025-03-01T12:00:00Z"},
		"commit", "--quiet", "-m", "initial specs")
	if r := runCmd(t, map[string]string{"SOURCE_DATE_EPOCH": "1740834000"}, "scale", "api", "server", "4", "--commit", "--author", "Ann <ann@example.com>", "--repo", root); r.code != 0 {
		t.Fatalf("scale: exit %d\n%s", r.code, r.stderr)
	}
	return root
}

func TestLifecycleOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // ROOT stands for the repository
		stderr string // in stderr
	}{
		{name: "pause", args: []string{"pause", "api"}, stdout: "paused shop/api (ROOT/apps/shop/api/app.yaml)\n"},
		{name: "nothing to do", args: []string{"resume", "api"}, stdout: "shop/api is already running (not paused); nothing to do\n"},
		{name: "warning", args: []string{"scale", "api", "server", "3"}, stdout: "scaled shop/api server to 3 replicas (ROOT/apps/shop/api/app.yaml)\n",
			stderr: "warning: shop/api server autoscales; replicas counts only while the app is paused (use --min/--max for the autoscaler)\n"},
		{name: "dry run", args: []string{"scale", "api", "server", "4", "--dry-run"},
			stdout: "--- apps/shop/api/app.yaml\n+++ apps/shop/api/app.yaml\n@@ -18,7 +18,7 @@\n     depends_on: [db]\n     workload_spec:\n       image: \"myorg/api:1.4.0\"   # bumped by CI\n-      replicas: 2                # enough for now\n+      replicas: 4                # enough for now\n       port: 8000\n       env:\n         - {name: DATABASE_URL, export_ref: {component: db, export_key: connection_string}}\n",
			stderr: "warning: shop/api server autoscales"},
		{name: "invalid", args: []string{"scale", "api", "server", "5000"}, code: 1,
			stderr: "ROOT/apps/shop/api/app.yaml:21:17: components[1].workload_spec.replicas: must be ≤ 1000; got 5000\nrender: the change would make the specs invalid; nothing was written\n"},
		{name: "invalid json", args: []string{"scale", "api", "server", "5000", "--format", "json"}, code: 1, stderr: `"path": "components[1].workload_spec.replicas"`},
		{name: "in use", args: []string{"delete", "api"}, code: 1,
			stderr: "render: shop/api cannot be deleted: other apps use its exports:\n  ROOT/apps/shop/web/app.json:13:45: components[0].workload_spec.env[0].export_ref: API_URL of shop/web (server.url)\n"},
		{name: "capture", args: []string{"template", "capture", "api", "st", "--param", "image=components[server].workload_spec.image", "--version", "2.0.0"},
			stdout: "wrote ROOT/templates/st/template.yaml with 1 parameter(s)\nan app uses it with:\n  template:\n    name: st\n    version: 2.0.0\n    parameters:\n      image: myorg/api:1.4.0   # string\n"},
		{name: "capture dry run", args: []string{"template", "capture", "api", "st", "--dry-run"}, stdout: "--- /dev/null\n+++ templates/st/template.yaml\n"},
		{name: "refused", args: []string{"pause", "apy"}, code: 1, stderr: "error: no app \"apy\" in ROOT; did you mean \"shop/api\"?\n"},
		{name: "malformed app", args: []string{"pause", "a//b"}, code: 2, stderr: `error: "a//b" is not an app`},
		{name: "scale usage", args: []string{"scale", "api"}, code: 2, stderr: "usage: render scale APP COMPONENT REPLICAS"},
		{name: "replicas", args: []string{"scale", "api", "server", "x"}, code: 2, stderr: `REPLICAS must be a whole number ≥ 0, got "x"`},
		{name: "image or dockerfile", args: []string{"new", "x", "--image", "a", "--dockerfile", "b"}, code: 2, stderr: "give one of --image or --dockerfile"},
		{name: "ingress port", args: []string{"new", "x", "--image", "a", "--host", "x.example.com"}, code: 2, stderr: "an ingress needs --port"},
		{name: "rollback usage", args: []string{"rollback", "api"}, code: 2, stderr: "usage: render rollback"},
		{name: "webhook URL", args: []string{"rollback", "api", "--to", "HEAD", "--webhook", "ftp://x", "--token-file", "/nonexistent"}, code: 2, stderr: `error: --webhook must be an http(s) URL, got "ftp://x"`},
		{name: "token without webhook", args: []string{"history", "api", "--token-file", "/nonexistent"}, code: 2, stderr: "--token-file needs --webhook"},
		{name: "history format", args: []string{"history", "api", "--format", "xml"}, code: 2, stderr: "--format must be text or json"},
		{name: "outside Git", args: []string{"rollback", "api", "--to", "HEAD"}, code: 2, stderr: "error: ROOT is not in a Git work tree\n"},
		{name: "template usage", args: []string{"template", "bogus"}, code: 2, stderr: `unknown command "template bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyLifecycleRepo(t)
			r := runCmd(t, nil, append(tt.args, "--repo", root)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			if want := strings.ReplaceAll(tt.stdout, "ROOT", root); !strings.HasPrefix(r.stdout, want) || tt.stdout == "" && r.stdout != "" {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
			}
			if want := strings.ReplaceAll(tt.stderr, "ROOT", root); !strings.Contains(r.stderr, want) || tt.stderr == "" && r.stderr != "" {
				t.Errorf("stderr:\n%s\nwant it to hold:\n%s", r.stderr, want)
			}
		})
	}
}

func TestLifecycleCommitOutput(t *testing.T) {
	t.Parallel()
	root := gitLifecycleRepo(t)
	env := map[string]string{"SOURCE_DATE_EPOCH": "1740844800"}
	r := runCmd(t, env, "pause", "api", "--commit", "--author", "Bob <bob@example.com>", "--repo", root)
	head := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))
	if want := "paused shop/api (" + root + "/apps/shop/api/app.yaml)\ncommitted " + head[:12] + " pause shop/api\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s%s", r.code, r.stdout, want, r.stderr)
	}
	if r := runCmd(t, env, "pause", "shop/api", "--commit", "--author", "bad", "--repo", root); r.code != 0 || !strings.Contains(r.stdout, "already paused") {
		t.Errorf("nothing to do: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCmd(t, env, "resume", "api", "--commit", "--author", "bad", "--repo", root); r.code != 2 || r.stderr != "error: --author must be 'Name <email>', got \"bad\"\n" {
		t.Errorf("bad author: exit %d\n%s", r.code, r.stderr)
	}
	// The work tree's spec put back as it was before the pause: HEAD holds
	// the change already.
	golden.WriteFiles(t, root, map[string]string{"apps/shop/api/app.yaml": gittest.Git(t, root, "show", "HEAD~1:apps/shop/api/app.yaml")})
	r = runCmd(t, env, "pause", "api", "--commit", "--author", "Bob <bob@example.com>", "--repo", root)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "paused shop/api") || r.stderr != "HEAD already holds this change; nothing was committed\n" {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestLifecycleNoAuthor changes HOME, so that no global Git configuration
// names an author, and so does not run in parallel.
func TestLifecycleNoAuthor(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := gitLifecycleRepo(t)
	r := runCmd(t, nil, "pause", "api", "--commit", "--repo", root)
	if want := "error: no commit author: pass --author 'Name <email>', or set git config user.name and user.email\n"; r.code != 2 || r.stderr != want {
		t.Errorf("exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}
}

// TestHistoryOutput prints the history of an app with the deployments of
// a real webhook server.
func TestHistoryOutput(t *testing.T) {
	t.Parallel()
	root := gitLifecycleRepo(t)
	revs := strings.Fields(gittest.Git(t, root, "rev-list", "--reverse", "HEAD"))
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, rev := range revs {
		at := t0.Add(time.Duration(i) * time.Hour)
		fleetRev := "main@sha1:" + strings.Repeat(string(rune('a'+i)), 40)
		if _, err := st.RecordEvents(ctx, []store.Event{{
			DedupeKey: rev, ReceivedAt: at, EventTime: at,
			Kind: "Kustomization", Namespace: "flux-system", Name: "shop-api-server",
			Severity: "info", Reason: "ReconciliationSucceeded", Message: "Applied revision " + fleetRev,
			Revision: fleetRev, Controller: "kustomize-controller",
			App: layout.AppRef{Project: "shop", Name: "api"}, Component: "server", SpecRevision: rev,
			Health: store.HealthHealthy, Body: []byte(`{}`),
		}}, at); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := webhook.New(webhook.Config{Store: st, APIToken: "s3cret", RecheckInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Stop() })
	tokenFile := filepath.Join(t.TempDir(), "token")
	golden.WriteFiles(t, filepath.Dir(tokenFile), map[string]string{"token": "s3cret\n"})

	var got strings.Builder
	for _, args := range [][]string{
		{"history", "api"},
		{"history", "api", "--webhook", ts.URL, "--token-file", tokenFile},
		{"history", "api", "--webhook", ts.URL, "--token-file", tokenFile, "--format", "json", "--limit", "1"},
	} {
		r := runCmd(t, nil, append(args, "--repo", root)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		got.WriteString("$ render " + strings.Join(args, " ") + "\n" + r.stdout)
	}
	golden.File(t, filepath.Join("testdata", "history.txt"), strings.NewReplacer(root, "ROOT", ts.URL, "WEBHOOK", tokenFile, "TOKEN").Replace(got.String()))

	golden.WriteFiles(t, filepath.Dir(tokenFile), map[string]string{"bad": "n0t-the-t0ken"})
	r := runCmd(t, nil, "history", "api", "--webhook", ts.URL, "--token-file", filepath.Join(filepath.Dir(tokenFile), "bad"), "--repo", root)
	if r.code != 1 || r.stderr != "error: webhook: GET /api/v1/apps/shop/api/deployments: 401 Unauthorized: missing or wrong bearer token\n" {
		t.Errorf("wrong token: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(got.String()+r.stderr, "s3cret") || strings.Contains(r.stderr, "n0t-the-t0ken") {
		t.Error("a token was printed")
	}
	// --env names an environment of the platform.
	r = runCmd(t, nil, "history", "api", "--env", "qa", "--repo", root)
	if r.code != 1 || !strings.Contains(r.stderr, `no environment "qa" on the platform`) {
		t.Errorf("--env qa: exit %d\n%s", r.code, r.stderr)
	}
	r = runCmd(t, nil, "rollback", "api", "--env", "qa", "--to", revs[0], "--repo", root)
	if r.code != 1 || !strings.Contains(r.stderr, `no environment "qa" on the platform`) {
		t.Errorf("rollback --env qa: exit %d\n%s", r.code, r.stderr)
	}
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		pos  []string
		min  int
	}{
		{[]string{"api", "web", "3"}, []string{"api", "web", "3"}, -1},
		{[]string{"--min", "2", "api", "web"}, []string{"api", "web"}, 2},
		{[]string{"api", "--min", "2", "web"}, []string{"api", "web"}, 2},
		{[]string{"api", "--", "--min"}, []string{"api", "--min"}, -1},
	}
	for _, tt := range tests {
		fs := newFlags("t", stdio{err: &strings.Builder{}})
		min := fs.Int("min", -1, "")
		pos, err := parseArgs(fs, tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if d := cmp.Diff(tt.pos, pos); d != "" || *min != tt.min {
			t.Errorf("%v: positional %v, min %d; want %v, %d", tt.args, pos, *min, tt.pos, tt.min)
		}
	}
}
