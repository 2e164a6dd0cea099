package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// verify --apps renders production, an environment with promote_from,
// from the release its files record (the apps repository at the
// promotion's commit, the app's folder at staging's spec revision): the
// fleet as promoted passes while main has moved on, and a hand edit of a
// production file is drift.
func TestVerifyEnvironments(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/environments")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "specs")
	head := func() string {
		t.Helper()
		g, err := render.OpenGit(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		h, err := g.Resolve("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	c1 := head()
	out := filepath.Join(dir, "fleet")
	write := func(f *generate.Fleet, repo *load.Repo) {
		t.Helper()
		plan, err := fleet.Compute(out, f.Map(), layout.ManagedDirs(&repo.Platform))
		if err != nil {
			t.Fatal(err)
		}
		if err := fleet.Apply(out, plan); err != nil {
			t.Fatal(err)
		}
	}
	previous := func(p string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(p)))
		return b, err == nil
	}
	renderMain := func() {
		t.Helper()
		repo, ps, err := render.LoadAt(ctx, dir, "HEAD")
		if err != nil || ps.HasErrors() {
			t.Fatal(err, ps)
		}
		revs, err := specRevisions(ctx, dir, "HEAD", repo)
		if err != nil {
			t.Fatal(err)
		}
		f, err := generate.Render(repo, generate.Options{SpecRevision: revs, Previous: previous})
		if err != nil {
			t.Fatal(err)
		}
		write(f, repo)
	}
	renderMain()
	staging, _ := previous(layout.ReleaseFile("stage-eu", "shop", "storefront"))
	rel, err := generate.ParseRelease(staging)
	if err != nil {
		t.Fatal(err)
	}
	relRepo, err := render.LoadRelease(ctx, dir, c1, map[string]string{"apps/shop/storefront": rel.SpecRevision})
	if err != nil {
		t.Fatal(err)
	}
	f, err := generate.Render(relRepo, generate.Options{
		SpecRevision: func(*load.LoadedApp) string { return rel.SpecRevision },
		Previous:     previous,
		Promote: func(a *load.LoadedApp) (generate.Promotion, bool) {
			return generate.Promotion{From: "staging", AppsCommit: c1}, a.Environment == "production"
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	write(f, relRepo)

	// main moves on and is rendered.
	p := filepath.Join(dir, "apps/shop/storefront/app.yaml")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, bytes.Replace(b, []byte("value: debug"), []byte("value: warn"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "commit", "-q", "-am", "log less")
	renderMain()
	if r := runVerify(t, nil, "--apps", dir); r.code != 0 {
		t.Fatalf("the fleet as promoted and rendered: exit %d\n%s%s", r.code, r.out, r.stderr)
	}

	deploy := filepath.Join(out, "apps/prod-eu/shop/storefront/web/deployment-storefront-web.yaml")
	b, _ = os.ReadFile(deploy)
	if !bytes.Contains(b, []byte("value: debug")) {
		t.Fatalf("production does not run the promoted release:\n%s", b)
	}
	if err := os.WriteFile(deploy, bytes.Replace(b, []byte("value: debug"), []byte("value: warn"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runVerify(t, nil, "--apps", dir)
	if r.code != 1 || !strings.Contains(r.out, "apps/prod-eu/shop/storefront/web/deployment-storefront-web.yaml") || !strings.Contains(r.out, "-          value: warn") || !strings.Contains(r.out, "+          value: debug") {
		t.Errorf("a hand edit of production: exit %d\n%s%s", r.code, r.out, r.stderr)
	}
}
