package review_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
)

// The same apps repository as the seed, its platform with fleet.artifacts:
// each component's Kustomization reads its own OCIRepository, pinned to the
// digest of its folder.
const artifactsPlatform = seedPlatform + "fleet: {artifacts: {repository: registry.example/fleet, secret_ref: fleet-pull}}\n"

const (
	seedApp = "apps/my-project/my-api/app.json"
	// seedAppFile holds the app's Flux objects, in its project's Flux
	// folder; seedClusterFile held them in the cluster folder.
	seedAppFile     = "apps/default/my-project/_flux/my-api.yaml"
	seedClusterFile = "clusters/default/apps/my-project-my-api.yaml"
	seedProjectFile = "clusters/default/projects/my-project.yaml"
	seedDep         = "apps/default/my-project/my-api/api/deployment-my-api-api.yaml"
)

func withArtifacts(files map[string][]byte) map[string][]byte {
	out := maps.Clone(files)
	out["platform.yaml"] = []byte(artifactsPlatform)
	return out
}

func imageBump(files map[string][]byte) map[string][]byte {
	return with(files, seedApp, "myorg/my-api:v1.2.0", "myorg/my-api:v1.3.0")
}

// TestArtifactComments keeps whole comments of changes to a fleet with
// fleet.artifacts, and of the switches between the layouts, as golden
// files. A head marked over renders over the base fleet, as render does
// over the fleet as it is.
func TestArtifactComments(t *testing.T) {
	t.Parallel()
	seed := seedFiles(t)
	art := withArtifacts(seed)
	type comment struct {
		name       string
		base, head map[string][]byte
		over       bool
		danger     []string
		has, hasNo []string
	}
	tests := []comment{
		{name: "artifacts-image-bump", base: art, head: imageBump(art),
			has: []string{"Flux reconciles **1 of the 2 components** of cluster `default` (and its one project Kustomization), listed under Flux sources",
				"| `default/my-project/my-api/api` | pulls its new artifact `sha256:", "| `default/my-project` | pulls its new artifact `sha256:", "(`my-api.yaml` changes)"},
			hasNo: []string{"OCIRepository |", "ref:", "digest:", "<code>" + seedAppFile + "</code>", "<code>" + seedProjectFile + "</code>", "postgres` |"}},
		{name: "artifacts-new-component", base: art, head: with(art, seedApp, `"components": [`,
			`"components": [{"name": "worker", "type": "workload", "workload_spec": {"image": "myorg/worker:1.0.0"}},`),
			has: []string{"Flux reconciles **1 of the 3 components**", "| `default/my-project/my-api/worker` | new: pulls its artifact `sha256:", "| OCIRepository | 1 | 0 | 0 |"}},
		{name: "artifacts-removed-component", base: with(art, seedApp, `"components": [`,
			`"components": [{"name": "worker", "type": "workload", "workload_spec": {"image": "myorg/worker:1.0.0"}},`), head: art,
			danger: []string{"workload `my-project/my-api-worker` is removed: Flux prunes it"},
			has: []string{"Flux reconciles **none of the 2 components**", "| `default/my-project/my-api/worker` | removed: its OCIRepository goes with its Kustomization, which prunes its objects |",
				"| OCIRepository | 0 | 0 | 1 |"}},
		{name: "artifacts-timeout", base: art, head: with(art, seedApp, `"timeout": "15m"`, `"timeout": "20m"`),
			has:   []string{"its Kustomization changes: reconciled with the same artifact", "-  timeout: 15m0s\n+  timeout: 20m0s"},
			hasNo: []string{"digest:"}},
		// The chart's version: the api, which reads its Secret, names the
		// chart's artifact in its dependsOn: Flux reconciles it again once
		// the chart has applied the new one.
		{name: "artifacts-dependency-bump", base: art, head: with(art, seedApp, `"version": "13.4.4"`, `"version": "13.4.5"`),
			has: []string{"Flux reconciles **all 2 components**", "| `default/my-project/my-api/postgres` | pulls its new artifact `sha256:",
				"| `default/my-project/my-api/api` | reconciled with the same artifact once its dependencies have applied their new artifacts |"},
			hasNo: []string{"readyExpr", "Kustomization |", "digest:"}},
		{name: "artifacts-migration", base: seed, head: art, over: true,
			has: []string{"**Migration:** 2 components move to their own OCI source", "their objects stay; nothing is redeployed.",
				"**Migration, first step:** prepares 1 app's move to its project's source",
				"Not shown: `" + seedClusterFile + "`, whose Flux objects change only as the Flux sources above say"},
			hasNo: []string{"OCIRepository |", "Kustomization |", "GitRepository\n", "prune: disabled\n"}},
		{name: "artifacts-migration-and-image-bump", base: seed, head: imageBump(art), over: true,
			has: []string{"**Migration:** 2 components move to their own OCI source", "nothing is redeployed but the changes of the one whose files change too",
				"| `default/my-project/my-api/api` | moves to its own OCI source, with a new artifact `sha256:"}},
		{name: "artifacts-migration-back", base: art, head: seed,
			has: []string{"**Migration:** 2 components move back to the fleet's GitRepository `flux-system` and their OCIRepositories are removed", "Flux reconciles **all 2 components**",
				"**Migration:** 1 app's Flux objects move back from its project's source (`apps/default/my-project/_flux`) to the cluster folder"},
			hasNo: []string{"OCIRepository |", "Kustomization |"}},
		{name: "artifacts-removed-app", base: art, head: map[string][]byte{"platform.yaml": []byte(artifactsPlatform)}, danger: []string{
			"app `default/my-project/my-api` is removed: Flux prunes every object it created; its 2 OCIRepositories go with its Kustomizations",
			"addon `my-project/my-api-postgres` is removed: the chart is uninstalled and its data volumes may be deleted",
			"namespace `my-project` is removed: everything in it is deleted",
		}, has: []string{"| OCIRepository | 0 | 0 | 3 |", "| `default/my-project` | removed, with its OCIRepository: it prunes the Flux objects of its apps |"}},
	}
	// Two clusters, an app on each: without artifacts, a change to one
	// reconciles the components of both.
	two := maps.Clone(seed)
	two["platform.yaml"] = []byte(seedPlatform + "clusters: [{name: eu}, {name: us}]\ndefault_cluster: eu\n")
	two["apps/my-project/other/app.json"] = []byte(strings.Replace(string(seed[seedApp]), `"name": "my-api",`, `"name": "other", "cluster": "us",`, 1))
	twoArt := withArtifacts(two)
	twoArt["platform.yaml"] = []byte(artifactsPlatform + "clusters: [{name: eu}, {name: us}]\ndefault_cluster: eu\n")
	tests = append(tests,
		comment{name: "two-clusters", base: two, head: imageBump(two),
			has: []string{"Flux reconciles **all 4 components** of the fleet's 2 clusters, changed or not", "1 of them changes"}},
		comment{name: "artifacts-two-clusters", base: twoArt, head: imageBump(twoArt),
			has:   []string{"Flux reconciles **1 of the 4 components** of the fleet's 2 clusters", "| `eu/my-project/my-api/api` | pulls its new artifact"},
			hasNo: []string{"`us/"}},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			baseRepo, base := renderFiles(t, tt.base)
			var prev map[string][]byte
			if tt.over {
				prev = base
			}
			headRepo, head := renderOver(t, tt.head, prev)
			c := review.Build(review.Input{Base: base, Head: head, BaseRepo: baseRepo, HeadRepo: headRepo, FullDiffHint: "the full diff is in the job summary"})
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
			if strings.HasPrefix(tt.name, "artifacts-") && !strings.Contains(c.FullDiff, "my-api.yaml\n") {
				t.Errorf("the full diff lacks the app's file")
			}
			golden.File(t, filepath.Join("testdata", tt.name+".md"), c.Body)
		})
	}
}

// repinProjects pins each project's OCIRepository to the digest its Flux
// folder builds, as render would after a hand edit of the folder.
func repinProjects(t *testing.T, f map[string][]byte) map[string][]byte {
	t.Helper()
	f = maps.Clone(f)
	folders := map[string][]artifact.File{}
	for _, p := range slices.Sorted(maps.Keys(f)) {
		if dir, name, ok := strings.Cut(p, "/_flux/"); ok {
			folders[dir+"/_flux"] = append(folders[dir+"/_flux"], artifact.File{Name: name, Data: f[p]})
		}
	}
	for dir, files := range folders {
		a, err := artifact.Build(dir, files)
		if err != nil {
			t.Fatal(err)
		}
		for p, b := range f {
			s := string(b)
			i := strings.Index(s, "fleetwright.io/artifact-path: "+dir+"\n")
			if i < 0 {
				continue
			}
			j := i + strings.Index(s[i:], "digest: ") + len("digest: ")
			f[p] = []byte(s[:j] + a.Digest.String() + s[j+len(a.Digest.String()):])
		}
	}
	return f
}

// TestDigestMismatch: a pinned digest that is not its folder's is a
// danger, with the component (or project) named, and its diff stays in
// the comment.
func TestDigestMismatch(t *testing.T) {
	t.Parallel()
	_, base := renderFiles(t, withArtifacts(seedFiles(t)))
	_, bumped := renderFiles(t, imageBump(withArtifacts(seedFiles(t))))
	digest := func(f map[string][]byte, component string) string {
		t.Helper()
		s := string(f[seedAppFile])
		i := strings.Index(s, "artifact-path: apps/default/my-project/my-api/"+component+"\n")
		j := strings.Index(s[i:], "digest: ")
		if i < 0 || j < 0 {
			t.Fatalf("no digest for %s in %s", component, s)
		}
		return s[i+j+len("digest: ") : i+j+len("digest: ")+len("sha256:")+64]
	}
	short := func(d string) string { return d[:len("sha256:")+12] }
	old, built := digest(base, "api"), digest(bumped, "api")
	other := "sha256:" + strings.Repeat("0f", 32)
	// The component's digest edited, the project's rebuilt: only the
	// component's is wrong.
	repin := func(f map[string][]byte, from, to string) map[string][]byte {
		f = maps.Clone(f)
		f[seedAppFile] = []byte(strings.Replace(string(f[seedAppFile]), from, to, 1))
		return repinProjects(t, f)
	}
	const who = "component `default/my-project/my-api/api`: its OCIRepository `my-project/my-project-my-api-api` "
	tests := []struct {
		name string
		head map[string][]byte
		want string
	}{
		{"digest changes, folder does not", repin(base, old, other),
			who + "now pins `" + short(other) + "` (was `" + short(old) + "`) but its folder `apps/default/my-project/my-api/api` does not change: " +
				"the fleet commit would deploy something other than what its Git files say (they build `" + short(old) + "`)"},
		{"folder changes, digest does not", repin(bumped, built, old),
			who + "still pins `" + short(old) + "` but its folder `apps/default/my-project/my-api/api` changes: " +
				"Flux would keep applying the old artifact, not what the fleet's Git files say (they build `" + short(built) + "`)"},
		{"both change, to another digest", repin(bumped, built, other),
			who + "pins `" + short(other) + "` but its folder `apps/default/my-project/my-api/api` builds `" + short(built) + "`: " +
				"the fleet commit would deploy something other than what its Git files say"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := review.Build(review.Input{Base: base, Head: tt.head})
			if diff := cmp.Diff([]string{tt.want}, c.Danger); diff != "" {
				t.Errorf("danger (-want +got):\n%s", diff)
			}
			if string(tt.head[seedAppFile]) != string(base[seedAppFile]) && (!strings.Contains(c.Body, "<code>"+seedAppFile+"</code>") || !strings.Contains(c.Body, "+    digest: ")) {
				t.Errorf("the app's file diff is hidden:\n%s", c.Body)
			}
			if strings.Contains(c.Body, "| `default/my-project/my-api/api` | pulls") {
				t.Errorf("a mismatched digest is shown as a new artifact:\n%s", c.Body)
			}
		})
	}
	// A Kustomization whose OCIRepository is gone.
	var docs []string
	for _, d := range strings.Split(string(bumped[seedAppFile]), "\n---\n") {
		if !strings.Contains(d, "kind: OCIRepository") || !strings.Contains(d, "artifact-path: apps/default/my-project/my-api/api\n") {
			docs = append(docs, d)
		}
	}
	gone := maps.Clone(bumped)
	gone[seedAppFile] = []byte(strings.Join(docs, "\n---\n"))
	gone = repinProjects(t, gone)
	want := []string{"component `default/my-project/my-api/api`: its Kustomization `my-project/my-project-my-api-api` reads OCIRepository `my-project/my-project-my-api-api`, " +
		"which the fleet does not hold: Flux cannot apply it"}
	if diff := cmp.Diff(want, review.Build(review.Input{Base: base, Head: gone}).Danger); diff != "" {
		t.Errorf("missing OCIRepository: danger (-want +got):\n%s", diff)
	}
	// The project's digest, which follows its Flux folder.
	projectDigest := func(f map[string][]byte) string {
		t.Helper()
		s := string(f[seedProjectFile])
		i := strings.Index(s, "digest: ")
		if i < 0 {
			t.Fatalf("no digest in %s", s)
		}
		return s[i+len("digest: ") : i+len("digest: ")+len("sha256:")+64]
	}
	oldP, builtP := projectDigest(base), projectDigest(bumped)
	const project = "project `default/my-project`: its OCIRepository `my-project/project-my-project` "
	withProjectFile := func(f map[string][]byte, data string) map[string][]byte {
		f = maps.Clone(f)
		f[seedProjectFile] = []byte(data)
		return f
	}
	for _, tt := range []struct {
		name string
		head map[string][]byte
		want string
	}{
		{"project digest changes, folder does not", withProjectFile(base, strings.Replace(string(base[seedProjectFile]), oldP, other, 1)),
			project + "now pins `" + short(other) + "` (was `" + short(oldP) + "`) but its folder `apps/default/my-project/_flux` does not change: " +
				"the fleet commit would deploy something other than what its Git files say (they build `" + short(oldP) + "`)"},
		{"folder changes, project digest does not", withProjectFile(bumped, string(base[seedProjectFile])),
			project + "still pins `" + short(oldP) + "` but its folder `apps/default/my-project/_flux` changes: " +
				"Flux would keep applying the old artifact, not what the fleet's Git files say (they build `" + short(builtP) + "`)"},
	} {
		c := review.Build(review.Input{Base: base, Head: tt.head})
		if diff := cmp.Diff([]string{tt.want}, c.Danger); diff != "" {
			t.Errorf("%s: danger (-want +got):\n%s", tt.name, diff)
		}
		if string(tt.head[seedProjectFile]) != string(base[seedProjectFile]) && !strings.Contains(c.Body, "+    digest: "+other) {
			t.Errorf("%s: the project file's diff is hidden:\n%s", tt.name, c.Body)
		}
		if strings.Contains(c.Body, "| `default/my-project` | pulls") {
			t.Errorf("%s: a mismatched digest is shown as a new artifact:\n%s", tt.name, c.Body)
		}
	}
	// The untouched fleet, and the render's own bump, are not dangers.
	for _, head := range []map[string][]byte{base, bumped} {
		if c := review.Build(review.Input{Base: base, Head: head}); len(c.Danger) != 0 {
			t.Errorf("danger = %q", c.Danger)
		}
	}
}

// TestDigestBesideOtherChanges: an OCIRepository whose digest follows its
// folder while something else of it changes shows that other change, and
// its digest line stays out of the diff.
func TestDigestBesideOtherChanges(t *testing.T) {
	t.Parallel()
	_, base := renderFiles(t, withArtifacts(seedFiles(t)))
	_, head := renderFiles(t, imageBump(withArtifacts(seedFiles(t))))
	const at = "    fleetwright.io/artifact-path: apps/default/my-project/my-api/api\n"
	head = maps.Clone(head)
	if !strings.Contains(string(head[seedAppFile]), at) {
		t.Fatalf("%s lacks %q", seedAppFile, at)
	}
	head[seedAppFile] = []byte(strings.Replace(string(head[seedAppFile]), at, "    example.com/note: rolled\n"+at, 1))
	head = repinProjects(t, head)
	c := review.Build(review.Input{Base: base, Head: head})
	if len(c.Danger) != 0 {
		t.Errorf("danger = %q", c.Danger)
	}
	for _, want := range []string{"+    example.com/note: rolled\n", "| OCIRepository | 0 | 1 | 0 |", "| `default/my-project/my-api/api` | pulls its new artifact `sha256:"} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, c.Body)
		}
	}
	if strings.Contains(c.Body, "digest: sha256:") {
		t.Errorf("the comment shows a digest line:\n%s", c.Body)
	}
}
