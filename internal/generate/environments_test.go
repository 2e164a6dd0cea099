package generate_test

import (
	"bytes"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// TestEnvironments renders an app with staging and production overrides
// the way the fleet lives: a render of the apps repository writes staging
// and leaves production out until it is promoted; a promotion writes
// production with production's overrides and staging's images, and
// records the release; a later render of a changed spec changes staging
// and leaves production byte for byte as the promotion wrote it.
func TestEnvironments(t *testing.T) {
	t.Parallel()
	specs := golden.ReadBytes(t, "testdata/environments/specs")
	repo := loadRepo(t, specs, "")
	stagingImages := map[string]string{}
	for _, a := range repo.Apps {
		if a.Environment == "staging" {
			stagingImages[load.NodeID(a, "api")] = "myorg/api@sha256:" + strings.Repeat("a", 64)
		}
	}
	renderOver := func(repo *load.Repo, prev map[string][]byte, images map[string]string, promote func(*load.LoadedApp) (generate.Promotion, bool)) map[string][]byte {
		t.Helper()
		opts := generate.Options{SpecRevision: revision, Images: images, Promote: promote}
		opts.Over(prev)
		f, err := generate.Render(repo, opts)
		if err != nil {
			t.Fatal(err)
		}
		return f.Map()
	}

	merged := renderOver(repo, nil, stagingImages, nil)
	golden.Tree(t, "testdata/environments/main", merged)
	for p := range merged {
		if layout.ClusterOf(&repo.Platform, p) == "prod-eu" {
			t.Errorf("a render of the apps repository wrote %s into production, which changes only by promotion", p)
		}
	}

	// The promotion: production's copy at staging's release.
	rel, err := generate.ParseRelease(merged[layout.ReleaseFile("stage-eu", "shop", "api")])
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, a := range repo.Apps {
		if a.Environment == "production" {
			for c, img := range rel.Images {
				images[load.NodeID(a, c)] = img
			}
		}
	}
	maps.Copy(images, stagingImages)
	promoted := renderOver(repo, merged, images, func(a *load.LoadedApp) (generate.Promotion, bool) {
		return generate.Promotion{From: "staging", AppsCommit: "89abcdef0123456789abcdef0123456789abcdef"}, a.Environment == "production"
	})
	golden.Tree(t, "testdata/environments/promoted", promoted)
	prodRelease, err := generate.ParseRelease(promoted[layout.ReleaseFile("prod-eu", "shop", "api")])
	if err != nil {
		t.Fatal(err)
	}
	if prodRelease.Images["api"] != rel.Images["api"] || prodRelease.SpecRevision != rel.SpecRevision || prodRelease.PromotedFrom != "staging" {
		t.Errorf("production's release %+v is not staging's %+v", prodRelease, rel)
	}
	deploy := promoted["apps/prod-eu/shop/api/api/deployment-api-api.yaml"]
	if !bytes.Contains(deploy, []byte("replicas: 4")) || !bytes.Contains(deploy, []byte(rel.Images["api"])) {
		t.Errorf("production's Deployment lacks its override or staging's image:\n%s", deploy)
	}
	for _, f := range []string{"clusters/prod-eu/apps/shop-api.yaml", "clusters/stage-eu/apps/shop-api.yaml"} {
		env := strings.TrimSuffix(strings.TrimPrefix(path.Dir(path.Dir(f)), "clusters/"), "-eu")
		want := map[string]string{"stage": "staging", "prod": "production"}[env]
		if !bytes.Contains(promoted[f], []byte(layout.LabelEnvironment+": "+want)) ||
			!bytes.Contains(promoted[f], []byte(layout.EventAnnotationPrefix+layout.EventEnvironment+": "+want)) {
			t.Errorf("%s: the Flux objects do not name environment %s:\n%s", f, want, promoted[f])
		}
	}

	// main moves on: staging changes, production stays as promoted.
	specs["apps/shop/api/app.yaml"] = bytes.Replace(specs["apps/shop/api/app.yaml"], []byte("LOG_LEVEL, value: debug"), []byte("LOG_LEVEL, value: info"), 1)
	next := renderOver(loadRepo(t, specs, ""), promoted, stagingImages, nil)
	var stagingChanged bool
	for _, p := range slices.Sorted(maps.Keys(promoted)) {
		switch layout.ClusterOf(&repo.Platform, p) {
		case "prod-eu":
			if !bytes.Equal(next[p], promoted[p]) {
				t.Errorf("%s changed in a render of main: production changes only by promotion", p)
			}
		case "stage-eu":
			stagingChanged = stagingChanged || !bytes.Equal(next[p], promoted[p])
		}
	}
	if !stagingChanged {
		t.Error("the render of the changed spec left staging as it was")
	}
	if len(next) != len(promoted) {
		t.Errorf("%d files after the render of main, %d before", len(next), len(promoted))
	}
}

// A release file that names a file of another app, or a file the fleet
// lacks, is refused: a render never copies what it cannot vouch for.
func TestKeptReleaseRefusesForeignFiles(t *testing.T) {
	t.Parallel()
	repo := loadRepo(t, golden.ReadBytes(t, "testdata/environments/specs"), "")
	for name, files := range map[string]string{
		"other app":     "  - apps/prod-eu/shop/other/api/deployment-other-api.yaml\n",
		"other project": "  - clusters/prod-eu/projects/bank.yaml\n",
		"escape":        "  - apps/prod-eu/shop/api/../../../../secrets.yaml\n",
		"missing":       "  - apps/prod-eu/shop/api/api/deployment-api-api.yaml\n",
	} {
		prev := map[string][]byte{
			layout.ReleaseFile("prod-eu", "shop", "api"):            []byte("environment: production\nfiles:\n" + files),
			"apps/prod-eu/shop/other/api/deployment-other-api.yaml": []byte("kind: Secret\n"),
			"clusters/prod-eu/projects/bank.yaml":                   []byte("kind: Namespace\n"),
			// What a folder's Previous reads for that path: outside the fleet.
			"apps/prod-eu/shop/api/../../../../secrets.yaml": []byte("kind: Secret\n"),
		}
		_, err := generate.Render(repo, generate.Options{Previous: generate.FileIn(prev)})
		if err == nil {
			t.Errorf("%s: a release listing %q was kept", name, files)
		}
	}
}
