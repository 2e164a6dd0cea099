package review_test

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
)

// projectApps are the seed's app and two apps of a second project.
func projectApps(t *testing.T) map[string][]byte {
	t.Helper()
	files := seedFiles(t)
	files["apps/shop/web/app.yaml"] = []byte("name: web\ncomponents:\n  - {name: site, type: workload, workload_spec: {image: nginx:1.27, port: 80}}\n")
	files["apps/shop/cart/app.yaml"] = []byte("name: cart\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: myorg/cart:1.0, port: 8080}}\n")
	return files
}

const (
	webFlux    = "apps/default/shop/_flux/web.yaml"
	webCluster = "clusters/default/apps/shop-web.yaml"
	shopFile   = "clusters/default/projects/shop.yaml"
	keptLine   = "    kustomize.toolkit.fluxcd.io/prune: disabled\n"
)

// unmarked is a fleet of the first step without its marks: the layout
// where each component has its own source and the root Kustomization
// applies the apps' Flux files from the cluster folder.
func unmarked(fleet map[string][]byte) map[string][]byte {
	out := maps.Clone(fleet)
	for p, b := range out {
		out[p] = []byte(strings.ReplaceAll(string(b), keptLine, ""))
	}
	return out
}

// TestProjectSourceComments keeps, as golden files, the comments of
// changes to a fleet with a source per project and of the moves between
// the layouts, each rendered as render does: over the fleet as it is.
func TestProjectSourceComments(t *testing.T) {
	t.Parallel()
	apps := projectApps(t)
	art := withArtifacts(apps)
	_, gitFleet := renderFiles(t, apps)
	_, step1 := renderOver(t, art, gitFleet)
	_, step2 := renderOver(t, art, step1)
	for _, p := range []string{webCluster, seedClusterFile} {
		if !strings.Contains(string(step1[p]), keptLine) || step2[p] != nil {
			t.Fatalf("the fleets are not the two steps of the move: %s", p)
		}
	}
	withoutCart := maps.Clone(art)
	delete(withoutCart, "apps/shop/cart/app.yaml")
	bump := with(art, "apps/shop/web/app.yaml", "nginx:1.27", "nginx:1.28")
	jobs := maps.Clone(art)
	jobs["apps/shop/jobs/app.yaml"] = []byte("name: jobs\ncomponents:\n  - {name: run, type: workload, workload_spec: {image: busybox:1.36}}\n")

	tests := []struct {
		name       string
		base       map[string][]byte // a fleet
		head       map[string][]byte // apps, rendered over base
		danger     []string
		has, hasNo []string
	}{
		{name: "projects-image-bump", base: step2, head: bump,
			has: []string{"Flux reconciles **1 of the 4 components** of cluster `default` (and 1 of the 2 project Kustomizations), listed under Flux sources",
				"| `default/shop` | pulls its new artifact `sha256:", "(`web.yaml` changes) |", "| `default/shop/web/site` | pulls its new artifact `sha256:",
				"Not shown: `" + webFlux + "`, `" + shopFile + "`"},
			hasNo: []string{"digest:", "`default/my-project", "OCIRepository |"}},
		{name: "projects-new-app", base: step2, head: jobs,
			has: []string{"Flux reconciles **1 of the 5 components** of cluster `default` (and 1 of the 2 project Kustomizations)",
				"(`jobs.yaml` is added) |", "| `default/shop/jobs/run` | new: pulls its artifact `sha256:", "| OCIRepository | 1 | 0 | 0 |", "| Kustomization | 1 | 0 | 0 |"}},
		{name: "projects-removed-app", base: step2, head: withoutCart,
			danger: []string{"app `default/shop/cart` is removed: Flux prunes every object it created; its 1 OCIRepository goes with its Kustomizations"},
			has:    []string{"Flux reconciles **none of the 3 components** of cluster `default` (and 1 of the 2 project Kustomizations)", "(`cart.yaml` is removed, its Flux objects pruned) |"}},
		{name: "projects-first-step", base: unmarked(step1), head: art,
			has: []string{"**Migration, first step:** prepares 3 apps' move to their projects' sources: their Flux objects in the cluster folder are marked `kustomize.toolkit.fluxcd.io/prune: disabled`",
				"Flux reconciles **none of the 4 components** of cluster `default`"},
			hasNo: []string{"prune: disabled\n", "Kustomization |", "OCIRepository |", "<details>", "project Kustomization"}},
		{name: "projects-second-step", base: step1, head: art,
			has: []string{"**Migration, second step:** 3 apps' Flux objects move from the cluster folder to their projects' sources (the Flux folders of 2 projects,",
				"Flux reconciles **none of the 4 components** of cluster `default` (and all 2 project Kustomizations)",
				"| `default/shop` | new: pulls its artifact `sha256:", "moved here from the cluster folder |"},
			hasNo: []string{"prune: disabled\n", "Kustomization |", "OCIRepository |", "<details>", "| component |"}},
		{name: "projects-back", base: step2, head: apps,
			has: []string{"**Migration:** 3 apps' Flux objects move back from their projects' sources (the Flux folders of 2 projects) to the cluster folder",
				"**Migration:** 4 components move back to the fleet's GitRepository", "Flux reconciles **all 4 components**",
				"| `default/shop` | removed, with its OCIRepository: the root Kustomization now applies its apps' Flux objects |"},
			hasNo: []string{"Kustomization |", "OCIRepository |", "<details>"}},
		{name: "projects-back-from-first-step", base: step1, head: apps,
			has: []string{"**Migration:** 3 apps' Flux objects in the cluster folder are no longer kept from pruning", "**Migration:** 4 components move back to the fleet's GitRepository",
				"Of those OCIRepositories, 4 stay in the cluster although the fleet no longer holds them: they are marked `kustomize.toolkit.fluxcd.io/prune: disabled`"},
			hasNo: []string{"prune: disabled\n", "Kustomization |", "OCIRepository |", "<details>", "project Kustomization", "| project |"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			headRepo, head := renderOver(t, tt.head, tt.base)
			c := review.Build(review.Input{Base: tt.base, Head: head, HeadRepo: headRepo, FullDiffHint: "the full diff is in the job summary"})
			if diff := cmp.Diff(tt.danger, c.Danger); diff != "" {
				t.Errorf("danger (-want +got):\n%s", diff)
			}
			for _, s := range tt.has {
				if !strings.Contains(c.Body, s) {
					t.Errorf("the comment lacks %q", s)
				}
			}
			for _, s := range tt.hasNo {
				if strings.Contains(c.Body, s) {
					t.Errorf("the comment holds %q", s)
				}
			}
			golden.File(t, filepath.Join("testdata", tt.name+".md"), c.Body)
		})
	}
}

// TestMoveDangers: the moves that lose objects are dangers, named.
func TestMoveDangers(t *testing.T) {
	t.Parallel()
	apps := projectApps(t)
	art := withArtifacts(apps)
	_, gitFleet := renderFiles(t, apps)
	_, step1 := renderOver(t, art, gitFleet)
	_, unmarkedFleet := renderOver(t, art, unmarked(step1))
	withoutCart := maps.Clone(art)
	delete(withoutCart, "apps/shop/cart/app.yaml")
	withoutSite := with(art, "apps/shop/web/app.yaml", "name: site,", "name: www,")

	// In one step, from either layout where the root applies the Flux
	// files: the root prunes the Kustomizations.
	_, oneStep := renderFiles(t, art)
	for name, base := range map[string]map[string][]byte{"from the Git layout": gitFleet, "from component sources": unmarked(step1)} {
		c := review.Build(review.Input{Base: base, Head: oneStep})
		if len(c.Danger) != 3 {
			t.Fatalf("%s: danger = %q", name, c.Danger)
		}
		want := "app `default/shop/web` moves to its project's source in one step: its 1 Kustomization (`shop/shop-web-site`) leave `" + webCluster +
			"`, which the root Kustomization applies, without `kustomize.toolkit.fluxcd.io/prune: disabled`, so the root prunes them, and they every object they applied, " +
			"before the project's Kustomization `shop/project-shop` creates them again from `apps/default/shop/_flux`."
		if !strings.HasPrefix(c.Danger[2], want) {
			t.Errorf("%s: danger %q, want it to start with %q", name, c.Danger[2], want)
		}
		if !strings.Contains(c.Body, "| `default/shop/web/site` | pruned by the root Kustomization with its objects, then created again from its project's source (see Danger) |") ||
			!strings.Contains(c.Body, "Flux reconciles **all 4 components**") || strings.Contains(c.Body, "**Migration, second step:**") {
			t.Errorf("%s:\n%s", name, c.Body)
		}
	}
	// Many apps in one step: one line.
	many := maps.Clone(apps)
	for _, n := range []string{"a1", "a2", "a3"} {
		many["apps/shop/"+n+"/app.yaml"] = []byte("name: " + n + "\ncomponents:\n  - {name: run, type: workload, workload_spec: {image: busybox:1.36}}\n")
	}
	_, manyGit := renderFiles(t, many)
	_, manyOneStep := renderFiles(t, withArtifacts(many))
	c := review.Build(review.Input{Base: manyGit, Head: manyOneStep})
	want := []string{"6 apps (`default/my-project/my-api`, `default/shop/a1`, `default/shop/a2` and 3 more) move to their projects' sources in one step: " +
		"their Kustomizations leave the cluster folder, which the root Kustomization applies, without `kustomize.toolkit.fluxcd.io/prune: disabled`, " +
		"so the root prunes them, and they every object they applied, before the projects' Kustomizations create them again. " +
		"Render with the fleet as it is first (that marks them), let Flux apply it, then render again to move them"}
	if diff := cmp.Diff(want, c.Danger); diff != "" {
		t.Errorf("many apps in one step: danger (-want +got):\n%s", diff)
	}

	// The second step after the first is no danger, nor the first.
	for name, tc := range map[string][2]map[string][]byte{"first step": {unmarked(step1), unmarkedFleet}, "second step": {step1, oneStep}} {
		if c := review.Build(review.Input{Base: tc[0], Head: tc[1]}); len(c.Danger) != 0 {
			t.Errorf("%s: danger = %q", name, c.Danger)
		}
	}

	// A new app during the first step goes straight to its project's
	// source, which appears for it: nothing moves.
	jobs := maps.Clone(art)
	jobs["apps/shop/jobs/app.yaml"] = []byte("name: jobs\ncomponents:\n  - {name: run, type: workload, workload_spec: {image: busybox:1.36}}\n")
	_, withJobs := renderOver(t, jobs, gitFleet)
	c = review.Build(review.Input{Base: gitFleet, Head: withJobs})
	if len(c.Danger) != 0 || !strings.Contains(c.Body, "| `default/shop` | new: pulls its artifact `sha256:") || strings.Contains(c.Body, "moved here") ||
		!strings.Contains(c.Body, "**Migration, first step:** prepares 3 apps' move") || !strings.Contains(c.Body, "| Kustomization | 2 | 0 | 0 |") {
		t.Errorf("new app during the first step: danger %q:\n%s", c.Danger, c.Body)
	}

	// Removed while kept from pruning: Flux keeps the app.
	_, removed := renderOver(t, withoutCart, step1)
	c = review.Build(review.Input{Base: step1, Head: removed})
	want = []string{"app `default/shop/cart` is removed from the fleet, but its Kustomizations are marked `kustomize.toolkit.fluxcd.io/prune: disabled` " +
		"(the first step of its move to its project's source): Flux does not prune them, so they and every object they applied stay on the cluster; delete them by hand"}
	if diff := cmp.Diff(want, c.Danger); diff != "" {
		t.Errorf("removed while kept: danger (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.Body, "| `default/shop/cart/api` | removed from the fleet, but kept from pruning: Flux leaves it and its objects (see Danger) |") {
		t.Errorf("removed while kept:\n%s", c.Body)
	}
	// A component removed while kept.
	_, renamed := renderOver(t, withoutSite, step1)
	c = review.Build(review.Input{Base: step1, Head: renamed})
	want = []string{"component `default/shop/web/site` is removed, but its Kustomization `shop/shop-web-site` is marked `kustomize.toolkit.fluxcd.io/prune: disabled`: " +
		"Flux does not prune it, so it and the objects it applied stay on the cluster; delete them by hand"}
	if diff := cmp.Diff(want, c.Danger); diff != "" {
		t.Errorf("component removed while kept: danger (-want +got):\n%s", diff)
	}

	// A project's Flux folder that no project Kustomization applies.
	_, step2 := renderOver(t, art, step1)
	_, bumped := renderOver(t, with(art, "apps/shop/web/app.yaml", "nginx:1.27", "nginx:1.28"), step2)
	bumped = maps.Clone(bumped)
	bumped[shopFile] = []byte(strings.SplitN(string(bumped[shopFile]), "\n---\n", 2)[0] + "\n")
	c = review.Build(review.Input{Base: step2, Head: bumped})
	want = []string{"no project Kustomization applies `apps/default/shop/_flux`, so Flux does not apply the Flux objects of `web.yaml`: " +
		"the project's file in the cluster folder must hold the OCIRepository of its artifact and the Kustomization that reads it"}
	if diff := cmp.Diff(want, c.Danger); diff != "" {
		t.Errorf("unapplied Flux folder: danger (-want +got):\n%s", diff)
	}
}

// TestSecondStepBesideOtherChanges: a Flux file that moves to its
// project's Flux folder while its objects change too shows one diff, from
// the file it leaves, with only the change that is not the move's.
func TestSecondStepBesideOtherChanges(t *testing.T) {
	t.Parallel()
	apps := projectApps(t)
	art := withArtifacts(apps)
	_, gitFleet := renderFiles(t, apps)
	_, step1 := renderOver(t, art, gitFleet)
	_, head := renderOver(t, with(art, seedApp, `"timeout": "15m"`, `"timeout": "20m"`), step1)
	c := review.Build(review.Input{Base: step1, Head: head})
	if len(c.Danger) != 0 {
		t.Errorf("danger = %q", c.Danger)
	}
	for _, want := range []string{
		"<details><summary>moved from <code>" + seedClusterFile + "</code>, changed — " + seedAppFile + " <code>" + seedAppFile + "</code></summary>",
		"\n-  timeout: 15m0s\n+  timeout: 20m0s\n", "**Migration, second step:** 3 apps' Flux objects move",
		"| `default/my-project/my-api/api` | its Kustomization changes: reconciled with the same artifact |",
	} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, c.Body)
		}
	}
	for _, not := range []string{"prune: disabled", "<code>" + seedClusterFile + "</code></summary>", "+apiVersion:"} {
		if strings.Contains(c.Body, not) {
			t.Errorf("the comment holds %q:\n%s", not, c.Body)
		}
	}
}

// TestKubeconfigProjects: on a cluster reached through a kubeconfig, the
// project's Kustomization applies its Namespace from the GitRepository:
// every fleet commit reconciles it, and the components keep their sources.
func TestKubeconfigProjects(t *testing.T) {
	t.Parallel()
	files := projectApps(t)
	files["platform.yaml"] = []byte(artifactsPlatform + "clusters: [{name: default, kubeconfig_secret: {name: kc, key: value}}]\n")
	_, base := renderFiles(t, files)
	_, head := renderOver(t, with(files, "apps/shop/web/app.yaml", "nginx:1.27", "nginx:1.28"), base)
	if _, ok := head[webCluster]; !ok {
		t.Fatalf("the app's Flux file is not in the cluster folder: %v", head)
	}
	c := review.Build(review.Input{Base: base, Head: head})
	if len(c.Danger) != 0 {
		t.Errorf("danger = %q", c.Danger)
	}
	for _, want := range []string{"Flux reconciles **1 of the 4 components** of cluster `default` (and all 2 project Kustomizations), listed under Flux sources: each reads its own OCI artifact, so",
		"| `default/shop/web/site` | pulls its new artifact `sha256:"} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, c.Body)
		}
	}
	if strings.Contains(c.Body, "| project |") || strings.Contains(c.Body, "Migration") {
		t.Errorf("the comment:\n%s", c.Body)
	}
}
