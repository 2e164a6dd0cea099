package gitrepo_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetwright/fleetwright/internal/gitrepo"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
)

// history builds a repository with the git CLI, one hour between commits.
type history struct {
	t    *testing.T
	dir  string
	tick int
}

func newHistory(t *testing.T) *history {
	t.Helper()
	dir := t.TempDir()
	gittest.Git(t, "", "init", "--quiet", "--initial-branch=main", dir)
	return &history{t: t, dir: dir}
}

func (h *history) env() []string {
	h.tick++
	d := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(h.tick) * time.Hour).Format(time.RFC3339)
	return []string{"GIT_AUTHOR_DATE=" + d, "GIT_COMMITTER_DATE=" + d}
}

func (h *history) git(args ...string) string {
	h.t.Helper()
	return gittest.GitEnv(h.t, h.dir, h.env(), args...)
}

// write sets files (empty content deletes) without committing.
func (h *history) write(files map[string]string) {
	h.t.Helper()
	for p, c := range files {
		full := filepath.Join(h.dir, filepath.FromSlash(p))
		if c == "" {
			h.git("rm", "--quiet", "--", p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			h.t.Fatal(err)
		}
		h.git("add", "--", p)
	}
}

func (h *history) commit(msg string, files map[string]string) {
	h.t.Helper()
	h.write(files)
	h.git("commit", "--quiet", "-m", msg)
}

// buildHistory makes a history with branches, clean merges, an evil merge
// (the merge's content differs from both parents), an "ours" merge that
// drops a side branch's change, and deleted paths.
func buildHistory(t *testing.T) *history {
	h := newHistory(t)
	h.commit("c1 init", map[string]string{
		"apps/shop/a/app.yaml": "a1\n", "apps/shop/b/app.yaml": "b1\n",
		"apps/shop/c/app.yaml": "c1\n", "apps/blog/d/app.yaml": "d1\n", "top.txt": "t1\n",
	})
	h.commit("c2 a", map[string]string{"apps/shop/a/app.yaml": "a2\n"})
	h.git("checkout", "--quiet", "-b", "feature")
	h.commit("c3 b on feature", map[string]string{"apps/shop/b/app.yaml": "b3\n"})
	h.git("checkout", "--quiet", "main")
	h.commit("c4 c", map[string]string{"apps/shop/c/app.yaml": "c4\n"})
	h.git("merge", "--quiet", "--no-ff", "-m", "c5 merge feature", "feature")
	h.commit("c6 delete c", map[string]string{"apps/shop/c/app.yaml": ""})
	h.git("checkout", "--quiet", "-b", "side")
	h.commit("c7 a on side", map[string]string{"apps/shop/a/app.yaml": "a7\n"})
	h.git("checkout", "--quiet", "main")
	h.commit("c8 a on main", map[string]string{"apps/shop/a/app.yaml": "a8\n"})
	if _, err := gittest.RunGit(h.dir, h.env(), "merge", "--quiet", "-m", "c9 evil merge", "side"); err == nil {
		t.Fatal("expected a merge conflict")
	}
	h.write(map[string]string{"apps/shop/a/app.yaml": "a9\n", "top.txt": "t9\n"})
	h.git("commit", "--quiet", "--no-edit")
	h.git("checkout", "--quiet", "-b", "dropped")
	h.commit("c10 b on dropped branch", map[string]string{"apps/shop/b/app.yaml": "b10\n", "apps/blog/e/app.yaml": "e10\n"})
	h.git("checkout", "--quiet", "main")
	h.commit("c11 d", map[string]string{"apps/blog/d/app.yaml": "d11\n"})
	h.git("merge", "--quiet", "-s", "ours", "-m", "c12 ours merge", "dropped")
	h.commit("c13 top", map[string]string{"top.txt": "t13\n"})
	return h
}

var historyPaths = []string{
	"apps/shop/a/app.yaml", "apps/shop/a", "apps/shop/b/app.yaml", "apps/shop/b",
	"apps/shop/c/app.yaml", "apps/shop/c", "apps/shop", "apps/blog/d", "apps/blog/e",
	"apps", "top.txt", "never/existed", "apps/shop/a/app.yaml/below-a-file",
}

// TestLastCommitFor checks every answer against `git log -1 -- path`.
func TestLastCommitFor(t *testing.T) {
	t.Parallel()
	h := buildHistory(t)
	r, err := gitrepo.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for _, ref := range []string{"main", "main~1", "feature", "side", "dropped"} {
		t.Run(ref, func(t *testing.T) {
			got, err := r.LastCommitFor(context.Background(), ref, historyPaths...)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, p := range historyPaths {
				if h := strings.TrimSpace(gittest.Git(t, h.dir, "log", "-1", "--format=%H %s", ref, "--", p)); h != "" {
					want[p] = h
				}
			}
			gotHS := map[string]string{}
			for p, c := range got {
				gotHS[p] = c.Hash + " " + c.Subject
			}
			if diff := cmp.Diff(want, gotHS); diff != "" {
				t.Errorf("LastCommitFor(%s) vs git log (-git +got):\n%s", ref, diff)
			}
		})
	}
	// The interesting answers, spelled out.
	got, err := r.LastCommitFor(context.Background(), "main", "apps/shop/a", "apps/shop/b", "apps/shop/c", "apps/blog/e")
	if err != nil {
		t.Fatal(err)
	}
	subjects := map[string]string{}
	for p, c := range got {
		subjects[p] = c.Subject
	}
	want := map[string]string{
		"apps/shop/a": "c9 evil merge",   // differs from both parents
		"apps/shop/b": "c3 b on feature", // through the clean merge
		"apps/shop/c": "c6 delete c",     // deletion counts as a change
		// apps/blog/e only ever existed on the branch the ours merge dropped
	}
	if diff := cmp.Diff(want, subjects); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if c := got["apps/shop/a"]; c.Author.Name != "Test Author" || c.Committer.When.IsZero() {
		t.Errorf("commit metadata = %+v", c)
	}
}

// TestHistory checks the lists against `git log -- paths`.
func TestHistory(t *testing.T) {
	t.Parallel()
	h := buildHistory(t)
	r, err := gitrepo.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	tests := []struct {
		name  string
		limit int
		paths []string
	}{
		{"file", 0, []string{"apps/shop/a/app.yaml"}},
		{"directory", 0, []string{"apps/shop"}},
		{"two paths", 0, []string{"apps/shop/b", "top.txt"}},
		{"deleted", 0, []string{"apps/shop/c"}},
		{"limit", 2, []string{"apps"}},
		{"all commits", 0, nil},
		{"never existed", 0, []string{"never/existed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.History(context.Background(), "main", tc.limit, tc.paths...)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"log", "--format=%s", "main"}
			if tc.limit > 0 {
				args = append(args, fmt.Sprintf("-%d", tc.limit))
			}
			args = append(append(args, "--"), tc.paths...)
			want := strings.Fields(strings.ReplaceAll(gittest.Git(t, h.dir, args...), " ", "_"))
			var gotS []string
			for _, c := range got {
				gotS = append(gotS, strings.ReplaceAll(c.Subject, " ", "_"))
			}
			if diff := cmp.Diff(want, gotS, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("History vs git log (-git +got):\n%s", diff)
			}
		})
	}
}

// benchRepo builds a repository of apps apps in one commit and then
// commits-1 commits that each change changed apps' specs.
func benchRepo(b *testing.B, apps, commits, changed int) (*gitrepo.Repo, []string) {
	b.Helper()
	dir := b.TempDir()
	gittest.Git(b, "", "init", "--quiet", "--initial-branch=main", dir)
	tick := 0
	r, err := gitrepo.Open(dir, gitrepo.WithClock(func() time.Time {
		tick++
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(tick) * time.Minute)
	}))
	if err != nil {
		b.Fatal(err)
	}
	files := make(map[string][]byte, apps)
	paths := make([]string, 0, apps)
	for i := range apps {
		p := fmt.Sprintf("apps/p%03d/app%05d", i%100, i)
		paths = append(paths, p)
		files[p+"/app.yaml"] = fmt.Appendf(nil, "name: app%05d\nrev: 0\n", i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	ch := gitrepo.Change{Prefixes: []string{"apps"}, Files: files, Message: "commit 0", Author: bot}
	if _, _, err := r.Commit(ctx, ch); err != nil {
		b.Fatal(err)
	}
	for c := 1; c < commits; c++ {
		// Each later commit owns only the files it changes.
		ch := gitrepo.Change{Files: map[string][]byte{}, Message: fmt.Sprintf("commit %d", c), Author: bot}
		for range changed {
			i := rng.IntN(apps)
			p := paths[i] + "/app.yaml"
			ch.Files[p] = fmt.Appendf(nil, "name: app%05d\nrev: %d\n", i, c)
			ch.Prefixes = append(ch.Prefixes, p)
		}
		if _, _, err := r.Commit(ctx, ch); err != nil {
			b.Fatal(err)
		}
	}
	// A clone holds its objects in a pack; so does this repository.
	gittest.Git(b, dir, "repack", "-adq")
	r.Close()
	if r, err = gitrepo.Open(dir); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	slices.Reverse(paths)
	return r, paths
}

// BenchmarkLastCommitFor answers 10,000 paths over 200 commits.
func BenchmarkLastCommitFor(b *testing.B) {
	const apps, commits = 10_000, 200
	r, paths := benchRepo(b, apps, commits, 25)
	ctx := context.Background()
	var n int
	for b.Loop() {
		got, err := r.LastCommitFor(ctx, "HEAD", paths...)
		if err != nil {
			b.Fatal(err)
		}
		n = len(got)
	}
	if n != apps {
		b.Fatalf("answered %d paths, want %d", n, apps)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/apps, "ns/path")
}

// BenchmarkCommit measures one fleet commit that changes 1% of 10,000
// apps' files (5 files each) after the first commit wrote them all.
func BenchmarkCommit(b *testing.B) {
	const apps = 10_000
	dir := b.TempDir()
	gittest.Git(b, "", "init", "--quiet", "--initial-branch=main", dir)
	r, err := gitrepo.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	files := make(map[string][]byte, apps*5)
	for i := range apps {
		for _, k := range []string{"kustomization", "deployment", "service", "ingress", "hpa"} {
			files[fmt.Sprintf("apps/prod/p%03d/app%05d/web/%s.yaml", i%100, i, k)] = fmt.Appendf(nil, "# Code generated by fleetwright. DO NOT EDIT.\nkind: %s\nname: app%05d-web\nrev: 0\n", k, i)
		}
	}
	ctx := context.Background()
	start := time.Now()
	if _, _, err := r.Commit(ctx, gitrepo.Change{Prefixes: []string{"apps/prod"}, Files: files, Message: "all", Author: bot}); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "s/first-commit")
	rev := 0
	for b.Loop() {
		rev++
		for i := 0; i < apps; i += 100 {
			files[fmt.Sprintf("apps/prod/p%03d/app%05d/web/deployment.yaml", i%100, i)] = fmt.Appendf(nil, "rev: %d\n", rev)
		}
		if _, _, err := r.Commit(ctx, gitrepo.Change{Prefixes: []string{"apps/prod"}, Files: files, Message: "some", Author: bot}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLand lands a change to 1% of 10,000 apps (5 files each) on a
// fleet repository over the file transport: fetch, reset, plan, commit and
// push per operation.
func BenchmarkLand(b *testing.B) {
	const apps = 10_000
	src := b.TempDir()
	gittest.Git(b, "", "init", "--quiet", "--initial-branch=main", src)
	r, err := gitrepo.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	files := make(map[string][]byte, apps*5)
	for i := range apps {
		for _, k := range []string{"kustomization", "deployment", "service", "ingress", "hpa"} {
			files[fmt.Sprintf("apps/prod/p%03d/app%05d/web/%s.yaml", i%100, i, k)] = fmt.Appendf(nil, "# Code generated by fleetwright. DO NOT EDIT.\nkind: %s\nname: app%05d-web\nrev: 0\n", k, i)
		}
	}
	ctx := context.Background()
	ch := gitrepo.Change{Prefixes: []string{"apps/prod"}, Files: files, Message: "all", Author: bot}
	if _, _, err := r.Commit(ctx, ch); err != nil {
		b.Fatal(err)
	}
	r.Close()
	bare := filepath.Join(b.TempDir(), "fleet.git")
	gittest.Git(b, "", "clone", "--quiet", "--bare", src, bare)

	for _, mode := range []struct {
		name string
		opts []gitrepo.Option
	}{{"worktree", nil}, {"bare", []gitrepo.Option{gitrepo.Bare()}}} {
		b.Run(mode.name, func(b *testing.B) {
			benchLand(b, bare, maps.Clone(files), mode.opts)
		})
	}
}

func benchLand(b *testing.B, bare string, files map[string][]byte, opts []gitrepo.Option) {
	const apps = 10_000
	ctx := context.Background()
	start := time.Now()
	w, err := gitrepo.Sync(ctx, filepath.Join(b.TempDir(), "work"), gitrepo.Remote{URL: bare}, "main", opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	clone := time.Since(start)
	rev := 0
	for b.Loop() {
		rev++
		for i := 0; i < apps; i += 100 {
			files[fmt.Sprintf("apps/prod/p%03d/app%05d/web/deployment.yaml", i%100, i)] = fmt.Appendf(nil, "rev: %d\n", rev)
		}
		res, err := w.Land(ctx, gitrepo.Target{Base: "main"}, gitrepo.Change{Prefixes: []string{"apps/prod"}, Files: files, Message: "some", Author: bot})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Pushed || res.Stats.Written != apps/100 {
			b.Fatalf("Land = %+v", res)
		}
	}
	b.ReportMetric(clone.Seconds(), "s/clone")
}
