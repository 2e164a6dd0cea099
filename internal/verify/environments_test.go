package verify

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/revision"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// TestDriftPerEnvironment: production, an environment with promote_from,
// is rendered again from the release its files record (the apps
// repository at the promotion's commit, the app's folder at the spec
// revision staging ran), while the specs on main have moved on. The fleet
// as the promotion and the next render of main left it has no drift; a
// hand edit of a production file is drift, though a render of main keeps
// production's files as they are.
func TestDriftPerEnvironment(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	top := t.TempDir()
	gittest.Git(t, top, "init", "-q", "-b", "main")
	specs := "../generate/testdata/environments/specs"
	write := func(rel string, data []byte) {
		t.Helper()
		golden.WriteFile(t, filepath.Join(top, filepath.FromSlash(rel)), data)
	}
	for _, rel := range []string{"platform.yaml", "apps/shop/api/app.yaml"} {
		b, err := os.ReadFile(filepath.Join(specs, rel))
		if err != nil {
			t.Fatal(err)
		}
		write(rel, b)
	}
	commit := func() string {
		t.Helper()
		gittest.Git(t, top, "add", "-A")
		gittest.Git(t, top, "commit", "-q", "-m", "specs")
		return strings.TrimSpace(gittest.Git(t, top, "rev-parse", "HEAD"))
	}
	loadRepo := func() (*load.Repo, func(*load.LoadedApp) string) {
		t.Helper()
		repo, ps, err := render.LoadAt(ctx, top, "HEAD")
		if err != nil || ps.HasErrors() {
			t.Fatal(err, ps)
		}
		revs, err := revision.Specs(ctx, top, "HEAD", repo)
		if err != nil {
			t.Fatal(err)
		}
		return repo, revs
	}
	c1 := commit()
	repo1, revs1 := loadRepo()
	f0, err := generate.Render(repo1, generate.Options{SpecRevision: revs1})
	if err != nil {
		t.Fatal(err)
	}
	fleet0 := f0.Map()

	// The promotion of staging's release to production.
	rel, err := generate.ParseRelease(fleet0[layout.ReleaseFile("stage-eu", "shop", "api")])
	if err != nil {
		t.Fatal(err)
	}
	relRepo, err := render.LoadRelease(ctx, top, c1, map[string]string{"apps/shop/api": rel.SpecRevision})
	if err != nil {
		t.Fatal(err)
	}
	f1, err := generate.Render(relRepo, generate.Options{
		SpecRevision: func(*load.LoadedApp) string { return rel.SpecRevision },
		Previous:     generate.FileIn(fleet0),
		Promote: func(a *load.LoadedApp) (generate.Promotion, bool) {
			return generate.Promotion{From: "staging", AppsCommit: c1}, a.Environment == "production"
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	fleet1 := f1.Map()

	// main moves on and is rendered: staging changes, production stays.
	b, _ := os.ReadFile(filepath.Join(top, "apps/shop/api/app.yaml"))
	write("apps/shop/api/app.yaml", bytes.Replace(b, []byte("value: debug"), []byte("value: info"), 1))
	commit()
	repo2, revs2 := loadRepo()
	f2, err := generate.Render(repo2, generate.Options{SpecRevision: revs2, Previous: generate.FileIn(fleet1)})
	if err != nil {
		t.Fatal(err)
	}
	fleet2 := f2.Map()
	deploy := "apps/prod-eu/shop/api/api/deployment-api-api.yaml"
	if !bytes.Equal(fleet2[deploy], fleet1[deploy]) || bytes.Equal(fleet2["apps/stage-eu/shop/api/api/deployment-api-api.yaml"], fleet1["apps/stage-eu/shop/api/api/deployment-api-api.yaml"]) {
		t.Fatal("the render of main did not keep production and change staging")
	}

	apps := func(atRelease bool) *Apps {
		a := &Apps{Repo: repo2, SpecRevision: revs2}
		if atRelease {
			a.AtRelease = func(ctx context.Context, ref string, folders map[string]string) (*load.Repo, error) {
				return render.LoadRelease(ctx, top, ref, folders)
			}
		}
		return a
	}
	drift := func(files map[string][]byte, a *Apps) []string {
		t.Helper()
		return lines(verifyFleet(t, files, Options{Platform: &repo2.Platform, Apps: a}), CheckDrift)
	}
	if got := drift(fleet2, apps(true)); len(got) > 0 {
		t.Errorf("drift in the fleet as promoted and rendered:\n%s", strings.Join(got, "\n"))
	}

	tampered := maps.Clone(fleet2)
	tampered[deploy] = bytes.Replace(fleet2[deploy], []byte("replicas: 4"), []byte("replicas: 40"), 1)
	got := drift(tampered, apps(true))
	if len(got) != 1 || !strings.Contains(got[0], deploy) {
		t.Errorf("a hand edit of production's %s: drift findings\n%s", deploy, strings.Join(got, "\n"))
	}
	// Without the releases, a render of the specs keeps production's
	// files as the fleet has them, and the edit would pass.
	if got := drift(tampered, apps(false)); len(got) != 0 {
		t.Errorf("without the releases, drift:\n%s", strings.Join(got, "\n"))
	}
}
