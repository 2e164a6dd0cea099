package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
)

// TestReviewBuiltImage reviews an app whose image render builds: the
// comment names the image by the content tag of its inputs at each
// revision, the same tag render gives the image it builds.
func TestReviewBuiltImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	gittest.GitEnv(t, dir, gitEnv, "commit", "-q", "--allow-empty", "-m", "empty")
	empty := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	golden.WriteFiles(t, dir, map[string]string{
		"platform.yaml":                    "registry: registry.example.com/fleet\n",
		"apps/shop/web/app.yaml":           "name: web\ncomponents: [{name: site, type: workload, workload_spec: {build_mode: dockerfile, build: {context: site}, port: 80}}]\n",
		"apps/shop/web/site/Dockerfile":    "FROM scratch\nCOPY index.html /srv/\n",
		"apps/shop/web/site/index.html":    "v1\n",
		"apps/shop/web/site/.dockerignore": "notes.txt\n",
		"apps/shop/web/site/run.sh":        "#!/bin/sh\nexec server\n",
	})
	// An executable and a link in the context: the review materializes
	// them as a checkout does, so its tag is render's.
	if err := os.Chmod(filepath.Join(dir, "apps/shop/web/site/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("index.html", filepath.Join(dir, "apps/shop/web/site/current.html")); err != nil {
		t.Fatal(err)
	}
	base := commitAll(t, dir, "web")
	tagAt := func() string {
		t.Helper()
		tag, err := build.ContentTag(build.Request{Root: dir, Context: "apps/shop/web/site", Platforms: []string{"linux/amd64", "linux/arm64"}, Mode: build.ModeDockerfile})
		if err != nil {
			t.Fatal(err)
		}
		return tag
	}
	before := tagAt()
	golden.WriteFiles(t, dir, map[string]string{"apps/shop/web/site/index.html": "v2\n"})
	head := commitAll(t, dir, "new page")
	after := tagAt()
	golden.WriteFiles(t, dir, map[string]string{"apps/shop/web/site/notes.txt": "ignored\n"})
	ignored := commitAll(t, dir, "notes")

	tests := []struct {
		name, base, head string
		want             []string
	}{
		{"added", empty, base, []string{"**1 app(s) added", "image: registry.example.com/fleet/shop/web-site:" + before}},
		{"changed input", base, head, []string{"`registry.example.com/fleet/shop/web-site:" + before + "` | `registry.example.com/fleet/shop/web-site:" + after + "`"}},
		{"ignored file", head, ignored, []string{"No fleet file changes."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCmd(t, nil, "review", "--base", tc.base, "--head", tc.head, "--post=false", dir)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("comment lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}
