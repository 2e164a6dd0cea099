package main

import (
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
)

// TestReviewArtifacts reviews a switch to fleet.artifacts, an image bump
// after it and the way back, from Git: the head renders over the base's
// fleet, so the switch is the first step of the move to the project's
// source (with the components' move to their own sources), the bump one
// new artifact of the component and one of its project, and nothing is
// pushed (the registry named does not answer).
func TestReviewArtifacts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q", "-b", "main")
	app := func(tag string) string {
		return "name: web\ncomponents:\n  - {name: site, type: workload, workload_spec: {image: nginx:" + tag + ", port: 80}}\n" +
			"  - {name: jobs, type: workload, workload_spec: {image: busybox:1.36}}\n"
	}
	golden.WriteFiles(t, dir, map[string]string{"apps/shop/web/app.yaml": app("1.27")})
	git := commitAll(t, dir, "web")
	golden.WriteFiles(t, dir, map[string]string{"platform.yaml": "fleet: {artifacts: {repository: 127.0.0.1:9/fleet, insecure: true}}\n"})
	oci := commitAll(t, dir, "component sources")
	golden.WriteFiles(t, dir, map[string]string{"apps/shop/web/app.yaml": app("1.28")})
	bump := commitAll(t, dir, "bump")

	tests := []struct {
		name, base, head string
		want, not        []string
	}{
		{"migration", git, oci, []string{"**Migration:** 2 components move to their own OCI source", "their objects stay; nothing is redeployed.",
			"**Migration, first step:** prepares 1 app's move to its project's source", "Not shown: `clusters/default/apps/shop-web.yaml`"},
			[]string{"digest:", "| OCIRepository |", "prune: disabled\n", "Danger"}},
		{"bump", oci, bump, []string{"Flux reconciles **1 of the 2 components** of cluster `default` (and its one project Kustomization)",
			"| `default/shop/web/site` | pulls its new artifact `sha256:", "| `default/shop` | pulls its new artifact `sha256:", "`nginx:1.27` | `nginx:1.28`"},
			[]string{"digest:", "Danger", "`default/shop/web/jobs`"}},
		{"back", bump, git, []string{"**Migration:** 2 components move back to the fleet's GitRepository",
			"**Migration:** 1 app's Flux objects move back from its project's source (`apps/default/shop/_flux`) to the cluster folder"},
			[]string{"| OCIRepository |", "Danger"}},
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
			for _, w := range tc.not {
				if strings.Contains(r.stdout, w) {
					t.Errorf("comment holds %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}
