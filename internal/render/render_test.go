package render_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
)

// copyExamples copies the examples (specs and templates) to dir.
func copyExamples(t *testing.T, dir string) {
	t.Helper()
	err := os.CopyFS(dir, os.DirFS("../../examples"))
	if err != nil {
		t.Fatal(err)
	}
}

func commit(t *testing.T, dir string) {
	t.Helper()
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "specs")
}

// TestSourcesAgree renders the examples (templated apps among them) from
// the folder and from a Git ref of the repository holding it, one folder
// down: the same fleet, spec revisions included. (Loading from a ref once
// left templates/ out.)
func TestSourcesAgree(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	gittest.Git(t, top, "init", "-q", "-b", "main")
	root := filepath.Join(top, "specs")
	copyExamples(t, root)
	// A templated app: its template is read from the ref too.
	golden.WriteFiles(t, root, map[string]string{"apps/shop/jobs/app.yaml": "name: jobs\ntemplate: {name: worker, parameters: {image: reg.test/jobs:1}}\n"})
	commit(t, top)
	// The work tree moves on; the ref does not.
	golden.WriteFiles(t, root, map[string]string{"apps/shop/orders/app.yaml": "name: orders\ncomponents: broken\n"})

	g, err := render.OpenGit(root)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fromGit, err := render.Run(t.Context(), render.Options{Source: g.At("HEAD"), SpecRevisions: true})
	if err != nil {
		t.Fatal(err)
	}
	if fromGit.Fleet == nil || len(fromGit.Repo.Apps) != 7 {
		t.Fatalf("from Git: %d apps, problems %v", len(fromGit.Repo.Apps), fromGit.Problems)
	}

	gittest.Git(t, top, "checkout", "-q", "--", ".")
	fromDir, err := render.Run(t.Context(), render.Options{Source: render.Dir(root), SpecRevisions: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fromDir.Fleet.Map(), fromGit.Fleet.Map()); d != "" {
		t.Errorf("fleets differ (-dir +git):\n%s", d)
	}
	head := strings.TrimSpace(gittest.Git(t, top, "rev-parse", "HEAD"))
	// The encoder quotes a revision that starts with a digit; either way
	// the value is head.
	fluxFiles := string(flux(fromGit.Fleet.Map()))
	if n := strings.Count(fluxFiles, "fleetwright.io/spec-revision: \""+head+"\"") + strings.Count(fluxFiles, "fleetwright.io/spec-revision: "+head+"\n"); n == 0 {
		t.Errorf("no Flux object carries the spec revision %s:\n%.1500s", head, flux(fromGit.Fleet.Map()))
	}
	if got := fromGit.Summary; got.Apps != 7 || got.Files != len(fromGit.Fleet.Files) {
		t.Errorf("summary %+v", got)
	}
}

func TestOpenGitOutside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := render.OpenGit(dir)
	var ng *render.NotGitError
	if !errors.As(err, &ng) || ng.Dir != dir {
		t.Fatalf("err = %v, want a NotGitError for %s", err, dir)
	}
	if _, _, err := render.LoadAt(t.Context(), dir, "main"); err == nil || !strings.Contains(err.Error(), "is not inside a Git work tree") {
		t.Errorf("LoadAt outside Git: %v", err)
	}
}

// TestContentTags names a built image by the content tag of its inputs:
// the same from the work tree and from Git, executables and links
// included, and the tag build.ContentTag gives the folder.
func TestContentTags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	golden.WriteFiles(t, dir, map[string]string{
		"platform.yaml":                 "registry: registry.example.com/fleet/\n",
		"apps/shop/web/app.yaml":        "name: web\ncomponents: [{name: site, type: workload, workload_spec: {build_mode: dockerfile, build: {context: site}, port: 80}}, {name: cache, type: workload, workload_spec: {image: redis:7, port: 6379}}]\n",
		"apps/shop/web/site/Dockerfile": "FROM scratch\nCOPY . /srv/\n",
		"apps/shop/web/site/index.html": "v1\n",
		"apps/shop/web/site/run.sh":     "#!/bin/sh\nexec server\n",
		"apps/shop/other.txt":           "outside the context\n",
	})
	if err := os.Chmod(filepath.Join(dir, "apps/shop/web/site/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("index.html", filepath.Join(dir, "apps/shop/web/site/current.html")); err != nil {
		t.Fatal(err)
	}
	commit(t, dir)
	tag, err := build.ContentTag(build.Request{Root: dir, Context: "apps/shop/web/site", Platforms: []string{"linux/amd64", "linux/arm64"}, Mode: build.ModeDockerfile})
	if err != nil {
		t.Fatal(err)
	}
	g, err := render.OpenGit(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for name, src := range map[string]render.Source{"dir": render.Dir(dir), "git": g.At("HEAD")} {
		t.Run(name, func(t *testing.T) {
			res, err := render.Run(t.Context(), render.Options{Source: src, Images: render.ContentTags{Unpinned: "--offline"}})
			if err != nil {
				t.Fatal(err)
			}
			want := "registry.example.com/fleet/shop/web-site:" + tag
			if !strings.Contains(string(res.Fleet.Map()["apps/default/shop/web/site/deployment-web-site.yaml"]), "image: "+want+"\n") {
				t.Errorf("the Deployment does not run %s:\n%s", want, deployments(res.Fleet.Map()))
			}
			wantWarnings := []string{
				"image redis:7 is not pinned by digest (--offline)",
				"image " + want + " is named by its content tag, not built (--offline)",
			}
			if d := cmp.Diff(wantWarnings, res.Warnings); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
			if res.Summary.Images != 1 {
				t.Errorf("%d images resolved, want 1", res.Summary.Images)
			}
		})
	}
}

func deployments(files map[string][]byte) string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if strings.Contains(p, "deployment-") {
			b.WriteString(p + ":\n" + string(files[p]))
		}
	}
	return b.String()
}

// TestFleetImages takes an image from the fleet only when it is the
// spec's image resolved: pinned by digest, or built into render's
// repository.
func TestFleetImages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	golden.WriteFiles(t, dir, map[string]string{
		"platform.yaml":            "registry: reg.example.com\n",
		"apps/shop/web/app.yaml":   "name: web\ncomponents: [{name: site, type: workload, workload_spec: {build_mode: dockerfile, port: 80}}, {name: cache, type: workload, workload_spec: {image: redis:7, port: 6379}}]\n",
		"apps/shop/web/Dockerfile": "FROM scratch\n",
	})
	repo, ps, err := render.Load(t.Context(), render.Dir(dir))
	if err != nil || ps.HasErrors() {
		t.Fatal(err, ps)
	}
	const site, cache = "apps/default/shop/web/site/deployment-web-site.yaml", "apps/default/shop/web/cache/deployment-web-cache.yaml"
	tests := []struct {
		name  string
		fleet map[string]string
		want  map[string]string
	}{
		{"empty fleet", nil, map[string]string{}},
		{"pinned and built", map[string]string{cache: "redis:7@sha256:aa", site: "reg.example.com/shop/web-site:t1@sha256:bb"},
			map[string]string{"default/shop/web/cache": "redis:7@sha256:aa", "default/shop/web/site": "reg.example.com/shop/web-site:t1@sha256:bb"}},
		{"digest without tag", map[string]string{cache: "redis@sha256:aa"}, map[string]string{"default/shop/web/cache": "redis@sha256:aa"}},
		{"another tag", map[string]string{cache: "redis:8@sha256:aa"}, map[string]string{}},
		{"not pinned", map[string]string{cache: "redis:7"}, map[string]string{}},
		{"another repository", map[string]string{site: "elsewhere.example.com/shop/web-site:t1"}, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := render.FleetImages{Image: func(file, container string) string { return tc.fleet[file] }}
			got, err := src.Images(context.Background(), render.ImageInput{Repo: repo})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got.ByNode); d != "" {
				t.Errorf("images (-want +got):\n%s", d)
			}
		})
	}
}

// flux joins the fleet's Flux Kustomization files.
func flux(files map[string][]byte) []byte {
	var b []byte
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if strings.HasPrefix(p, "clusters/") {
			b = append(b, files[p]...)
		}
	}
	return b
}
