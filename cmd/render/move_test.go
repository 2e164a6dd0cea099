package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

const movingWarning = "render again to move them to their project's source"

// Switching a fleet on the fleet branch to fleet.artifacts takes two
// renders: the first keeps the apps' Flux objects where the root
// Kustomization applies them, marked not to be pruned, and says to render
// again; the second, reading the branch, moves them to the project's
// source. Rendering again before the first is on the branch repeats the
// first step.
func TestMoveToProjectSourcesOnTheFleetBranch(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{"README.md": "fleet\n"})
	bare := gs.Path("fleet.git")
	reg := registrytest.New(t, registrytest.Options{})
	root := appsRepo(t, "build: {pin: false}\nfleet: {path: ., mode: push}\n")
	render := func(wantWarning bool) string {
		t.Helper()
		r := runCmd(t, nil, "--fleet-repo", url, root)
		if r.code != 0 || strings.Contains(r.stderr, movingWarning) != wantWarning {
			t.Fatalf("exit %d (want the moving warning: %v): %s", r.code, wantWarning, r.stderr)
		}
		return gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	}
	show := func(p string) string { return gittest.Git(t, bare, "show", "main:"+p) }

	render(false) // the Git layout
	golden.WriteFiles(t, root, map[string]string{"platform.yaml": "build: {pin: false}\nfleet: {path: ., mode: push, artifacts: {repository: " + reg.Host() + "/fleet}}\n"})

	files := render(true)
	for _, p := range []string{"clusters/default/apps/shop-web.yaml", "clusters/default/apps/shop-api.yaml"} {
		if !strings.Contains(files, p+"\n") {
			t.Fatalf("step one moved %s:\n%s", p, files)
		}
		if got := show(p); strings.Count(got, "kustomize.toolkit.fluxcd.io/prune: disabled") != 2 || !strings.Contains(got, "kind: OCIRepository") {
			t.Errorf("step one: %s is not marked (OCIRepository and Kustomization):\n%s", p, got)
		}
	}
	if strings.Contains(files, "_flux/") {
		t.Errorf("step one already wrote project Flux files:\n%s", files)
	}

	files = render(false)
	if strings.Contains(files, "clusters/default/apps/") || !strings.Contains(files, "apps/default/shop/_flux/web.yaml\n") {
		t.Fatalf("step two did not move the Flux files:\n%s", files)
	}
	if got := show("apps/default/shop/_flux/web.yaml"); strings.Contains(got, "prune: disabled") {
		t.Errorf("the moved file is still marked:\n%s", got)
	}
	if got := show("clusters/default/projects/shop.yaml"); !strings.Contains(got, "name: project-shop") || !strings.Contains(got, "fleetwright.io/artifact-path: apps/default/shop/_flux") {
		t.Errorf("the project has no source:\n%s", got)
	}
	head := gittest.Git(t, bare, "rev-parse", "main")
	if r := runCmd(t, nil, "--fleet-repo", url, root); r.code != 0 || !strings.Contains(r.stderr, "up to date") {
		t.Fatalf("rerun: exit %d: %s", r.code, r.stderr)
	}
	if gittest.Git(t, bare, "rev-parse", "main") != head {
		t.Error("a rerun after the move pushed a commit")
	}
}

// The same two steps in a fleet folder, with the fleet index on: the apps
// that move are generated again although their inputs did not change, and
// once moved they are reused and read back into the project's artifact.
func TestMoveToProjectSourcesInAFolder(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	root := appsRepo(t, "build: {pin: false}\n")
	env := map[string]string{"FLEETWRIGHT_CACHE": t.TempDir()}
	out := filepath.Join(root, "fleet")
	render := func(wantWarning bool) string {
		t.Helper()
		r := runCmd(t, env, root)
		if r.code != 0 || strings.Contains(r.stderr, movingWarning) != wantWarning {
			t.Fatalf("exit %d (want the moving warning: %v): %s", r.code, wantWarning, r.stderr)
		}
		return r.stderr
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(out, filepath.FromSlash(p)))
		return err == nil
	}
	render(false)
	golden.WriteFiles(t, root, map[string]string{"platform.yaml": "build: {pin: false}\nfleet: {artifacts: {repository: " + reg.Host() + "/fleet}}\n"})
	render(true)
	if !exists("clusters/default/apps/shop-web.yaml") || exists("apps/default/shop/_flux/web.yaml") {
		t.Fatal("step one moved the Flux files")
	}
	render(false)
	if exists("clusters/default/apps/shop-web.yaml") || !exists("apps/default/shop/_flux/web.yaml") {
		t.Fatal("step two did not move the Flux files")
	}
	project, err := os.ReadFile(filepath.Join(out, "clusters/default/projects/shop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The files age past the index's racy margin, and a render saves the
	// index after that: then it vouches for them and both apps are reused.
	time.Sleep(150 * time.Millisecond)
	render(false)
	if stderr := render(false); !strings.Contains(stderr, "(2 app(s) up to date") {
		t.Fatalf("the apps were not reused: %s", stderr)
	}
	again, _ := os.ReadFile(filepath.Join(out, "clusters/default/projects/shop.yaml"))
	if string(again) != string(project) {
		t.Errorf("a render that reused the apps changed the project's file:\n%s\nthen\n%s", project, again)
	}
}
