package verify

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// artifactsRepo returns the examples' specs with fleet.artifacts set to
// the repository.
func artifactsRepo(t testing.TB, repository string) *load.Repo {
	t.Helper()
	repo := *loadExamples(t)
	fl := *repo.Platform.Fleet
	fl.Artifacts = &spec.FleetArtifacts{Repository: repository, SecretRef: "fleet-pull"}
	repo.Platform.Fleet = &fl
	return &repo
}

// renderArtifacts renders the specs as render does offline.
func renderArtifacts(t testing.TB, repo *load.Repo) map[string][]byte {
	t.Helper()
	f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	return f.Map()
}

var artifactsExamples struct {
	once  sync.Once
	repo  *load.Repo
	files map[string][]byte
}

// artifactsFleet returns a copy of the examples rendered with
// fleet.artifacts (repository ghcr.io/myorg/fleet), and their specs.
func artifactsFleet(t testing.TB) (*load.Repo, map[string][]byte) {
	t.Helper()
	artifactsExamples.once.Do(func() {
		artifactsExamples.repo = artifactsRepo(t, "ghcr.io/myorg/fleet")
		artifactsExamples.files = renderArtifacts(t, artifactsExamples.repo)
	})
	return artifactsExamples.repo, maps.Clone(artifactsExamples.files)
}

// The artifacts fleet is built, checked and policy-checked exactly like the
// same specs rendered for the fleet's GitRepository: the same findings,
// the same paths built, and besides them each project's source (its
// OCIRepository and the Kustomization that applies its apps' Flux files)
// and each component's OCIRepository; the drift check renders the same
// digests.
func TestArtifactsLikeGit(t *testing.T) {
	t.Parallel()
	for _, full := range []bool{false, true} {
		repo, files := artifactsFleet(t)
		rep := verifyFleet(t, files, Options{Platform: &repo.Platform, Apps: &Apps{Repo: repo}, FullBuild: full})
		gitRepo, gitFiles := exampleFleet(t)
		gitRep := verifyFleet(t, gitFiles, Options{Apps: &Apps{Repo: gitRepo}, FullBuild: full})
		if diff := cmp.Diff(lines(gitRep), lines(rep)); diff != "" {
			t.Errorf("full build %v: findings differ from the Git layout's (-git +artifacts):\n%s", full, diff)
		}
		const projects = 2 // shop and my-project, each with its source
		s, g := rep.Stats, gitRep.Stats
		kustomized := g.Kustomized // the projects' Flux files are assembled directly
		if full {
			kustomized += projects
		}
		if s.Kustomizations != g.Kustomizations+projects || s.Built != s.Kustomizations || s.Kustomized != kustomized {
			t.Errorf("full build %v: built %d of %d Kustomizations (%d by kustomize), the Git layout %d of %d (%d); want %d projects more",
				full, s.Built, s.Kustomizations, s.Kustomized, g.Built, g.Kustomizations, g.Kustomized, projects)
		}
		if s.Artifacts != g.Kustomizations+projects || s.Objects != g.Objects+s.Artifacts+projects {
			t.Errorf("full build %v: %d artifacts, %d objects; want %d artifacts, %d objects", full, s.Artifacts, s.Objects, g.Kustomizations+projects, g.Objects+s.Artifacts+projects)
		}
	}
}

// The golden fleet of generate's artifacts spec is clean.
func TestArtifactsGolden(t *testing.T) {
	t.Parallel()
	const specs = "../generate/testdata/specs/artifacts"
	repo := spectest.Load(t, specs)
	rep, err := Run(t.Context(), Options{FleetDir: "../generate/testdata/fleets/artifacts", Display: "fleet", Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{}, lines(rep, CheckArtifact, CheckBuild, CheckAPI, CheckDeps, CheckProjects, CheckDuplicate)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// The two components' and the project's.
	if rep.Failed() || rep.Stats.Artifacts != 3 || rep.Stats.Built != 3 {
		t.Errorf("stats %+v: want 3 artifacts and 3 paths built", rep.Stats)
	}
}

const (
	// shopOrdersFlux holds the Flux objects of app orders, which the
	// project's Kustomization applies from the artifact of shopFlux;
	// shopProject the project's source.
	shopOrdersFlux = "apps/prod-eu/shop/_flux/orders.yaml"
	shopFlux       = "apps/prod-eu/shop/_flux"
	shopProject    = "clusters/prod-eu/projects/shop.yaml"
	ordersFolder   = "apps/prod-eu/shop/orders/api/"
	ordersAPIFile  = ordersFolder + "deployment-orders-api.yaml"
	ordersKust     = ordersFolder + "kustomization.yaml"
	// shopOrdersFlux holds, for each component, its OCIRepository and then its
	// Kustomization; api's are first.
	apiDigestLine = "    digest: sha256:"
)

var digestRE = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// normalize shows the digests the fleet pins as sha256:PINNED and any
// other as sha256:OTHER.
func normalize(lines []string, pinned map[string]bool) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = digestRE.ReplaceAllStringFunc(l, func(d string) string {
			if pinned[d] {
				return "sha256:PINNED"
			}
			return "sha256:OTHER"
		})
	}
	return out
}

// pinnedDigests returns every digest the fleet's files name.
func pinnedDigests(files map[string][]byte) map[string]bool {
	out := map[string]bool{}
	for _, b := range files {
		for _, d := range digestRE.FindAll(b, -1) {
			out[string(d)] = true
		}
	}
	return out
}

// editLine replaces the first line of a file that starts with prefix.
func editLine(t testing.TB, files map[string][]byte, file, prefix, repl string) {
	t.Helper()
	lines := strings.SplitAfter(string(files[file]), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = repl
			files[file] = []byte(strings.Join(lines, ""))
			return
		}
	}
	t.Fatalf("%s has no line starting with %q", file, prefix)
}

const (
	fixProject       = "re-render: with fleet.artifacts, on a cluster Flux runs in, render writes the project's source"
	noShopSource     = "the project's file fleet/" + shopProject + " has no project source (an OCIRepository built from fleet/" + shopFlux + ", annotation fleetwright.io/artifact-path, and the Kustomization project-shop that applies it); " + fixProject
	unreadShopSource = "OCIRepository project-shop (fleet/" + shopProject + ":40) is built from fleet/" + shopFlux + ", but no Kustomization reads it; " + fixProject
)

const fixArtifact = "re-render: render rebuilds the artifact from the folder, pushes it and pins its digest"

func TestArtifactChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(t testing.TB, files map[string][]byte)
		opts   func(o *Options)
		checks []Check
		want   []string
		// project: the test is about the projects' artifacts; the others
		// see the project's digest pinned again after their edit, as
		// render would pin it.
		project bool
	}{
		{name: "clean", checks: []Check{CheckArtifact, CheckBuild}, want: []string{}},
		{
			name:   "a file of the folder edited",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, ordersAPIFile, "replicas: 2", "replicas: 3") },
			checks: []Check{CheckArtifact},
			want: []string{"fleet/" + shopOrdersFlux + ":25: OCIRepository/shop-orders-api: spec.ref.digest: pins sha256:PINNED, but the files of " +
				"fleet/apps/prod-eu/shop/orders/api pack to sha256:OTHER: Flux applies content that the fleet's files do not show; " + fixArtifact},
		},
		{
			name: "a file added by hand",
			mutate: func(t testing.TB, f map[string][]byte) {
				f[ordersFolder+"extra.yaml"] = []byte(handAdded)
				f[ordersFolder+"notes/README.md"] = []byte("notes\n")
			},
			checks: []Check{CheckArtifact},
			want: []string{"fleet/" + shopOrdersFlux + ":25: OCIRepository/shop-orders-api: spec.ref.digest: pins sha256:PINNED, but the files of " +
				"fleet/apps/prod-eu/shop/orders/api pack to sha256:OTHER: Flux applies content that the fleet's files do not show; without extra.yaml, notes/README.md, " +
				"which render did not write, they pack to the pinned digest: render leaves such files out of the artifact, move them out of the folder"},
		},
		{
			name: "the folder is gone",
			mutate: func(t testing.TB, f map[string][]byte) {
				for p := range f {
					if strings.HasPrefix(p, ordersFolder) {
						delete(f, p)
					}
				}
			},
			checks: []Check{CheckArtifact, CheckBuild},
			want: []string{"fleet/" + shopOrdersFlux + ":9: OCIRepository/shop-orders-api: metadata.annotations.fleetwright.io/artifact-path: the artifact is built from folder " +
				"fleet/apps/prod-eu/shop/orders/api, which the fleet does not have: no Git file shows what Flux would apply; " + fixArtifact +
				", or delete this OCIRepository and its Kustomization"},
		},
		{
			name: "the annotation names no folder",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "artifact-path: apps/prod-eu/shop/orders/api\n", "artifact-path: ../api\n")
			},
			checks: []Check{CheckArtifact},
			want:   []string{"fleet/" + shopOrdersFlux + `:9: OCIRepository/shop-orders-api: metadata.annotations.fleetwright.io/artifact-path: "../api" is not a folder path inside the fleet, such as apps/<cluster>/<project>/<app>/<component> or apps/<cluster>/<project>/_flux`},
		},
		{
			name: "a dependsOn's readyExpr names another artifact than the dependency's",
			mutate: func(t testing.TB, f map[string][]byte) {
				const file = "apps/prod-eu/my-project/_flux/my-api.yaml"
				b := f[file]
				m := regexp.MustCompile(`lastAppliedRevision == '(sha256:[0-9a-f]{64})'`).FindSubmatchIndex(b)
				if m == nil {
					t.Fatalf("%s has no readyExpr naming an artifact:\n%s", file, b)
				}
				f[file] = append(append(slices.Clone(b[:m[2]]), "sha256:"+strings.Repeat("0", 64)...), b[m[3]:]...)
			},
			checks: []Check{CheckDeps},
			want: []string{"fleet/apps/prod-eu/my-project/_flux/my-api.yaml:112: Kustomization/my-project-my-api-api: spec.dependsOn[0].readyExpr: waits for Kustomization my-project-my-api-postgres " +
				"to apply artifact sha256:OTHER, but its OCIRepository my-project-my-api-postgres pins sha256:PINNED: Flux would hold this Kustomization back for good; " +
				"re-render (render names the artifact the dependency's OCIRepository pins)"},
		},
		{
			name: "a tag instead of the digest",
			mutate: func(t testing.TB, f map[string][]byte) {
				editLine(t, f, shopOrdersFlux, apiDigestLine, "    tag: 2.4.1\n")
			},
			checks: []Check{CheckArtifact},
			want: []string{"fleet/" + shopOrdersFlux + ":24: OCIRepository/shop-orders-api: spec.ref: not pinned by digest (it follows spec.ref.tag 2.4.1): the fleet would not say which artifact runs, " +
				"and a push would change it without a fleet commit; pin spec.ref.digest to the artifact of fleet/apps/prod-eu/shop/orders/api (" + fixArtifact + ")"},
		},
		{
			name: "no ref",
			mutate: func(t testing.TB, f map[string][]byte) {
				editLine(t, f, shopOrdersFlux, apiDigestLine, "")
				edit(t, f, shopOrdersFlux, "  ref:\n  secretRef:", "  secretRef:")
			},
			checks: []Check{CheckArtifact},
			want: []string{"fleet/" + shopOrdersFlux + ":22: OCIRepository/shop-orders-api: spec.ref: not pinned by digest (it has no spec.ref): the fleet would not say which artifact runs, " +
				"and a push would change it without a fleet commit; pin spec.ref.digest to the artifact of fleet/apps/prod-eu/shop/orders/api (" + fixArtifact + ")"},
		},
		{
			name:   "a path below the artifact's root",
			mutate: func(t testing.TB, f map[string][]byte) { edit(t, f, shopOrdersFlux, "  path: ./\n", "  path: ./sub\n") },
			checks: []Check{CheckArtifact, CheckBuild},
			want: []string{
				"fleet/" + shopOrdersFlux + ":51: Kustomization/shop-orders-api: spec.path: path ./sub: the artifact of OCIRepository shop-orders-api holds folder fleet/apps/prod-eu/shop/orders/api at its root, " +
					"and a component's Kustomization builds that root: the path must be ./ (so Flux would build fleet/apps/prod-eu/shop/orders/api/sub)",
				"fleet/" + shopOrdersFlux + ":51: Kustomization/shop-orders-api: spec.path: kustomize build fleet/apps/prod-eu/shop/orders/api/sub (the artifact of OCIRepository shop-orders-api): no such folder in the fleet",
				"fleet/" + ordersKust + ":1: warning: no Flux Kustomization builds this folder",
			},
		},
		{
			name: "another repository",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "url: oci://ghcr.io/myorg/fleet\n", "url: oci://ghcr.io/other/fleet\n")
			},
			checks: []Check{CheckArtifact, CheckAPI},
			want: []string{"fleet/" + shopOrdersFlux + ":28: OCIRepository/shop-orders-api: spec.url: url oci://ghcr.io/other/fleet is not the fleet's artifact repository " +
				"oci://ghcr.io/myorg/fleet (platform.yaml fleet.artifacts.repository); " + fixArtifact},
		},
		{
			name: "another repository, without the platform's",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "url: oci://ghcr.io/myorg/fleet\n", "url: oci://ghcr.io/other/fleet\n")
			},
			opts:   func(o *Options) { o.Platform = nil },
			checks: []Check{CheckArtifact, CheckAPI},
			want:   []string{},
		},
		{
			name: "an OCIRepository no file defines",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "    kind: OCIRepository\n    name: shop-orders-api\n", "    kind: OCIRepository\n    name: shop-orders-apii\n")
			},
			checks: []Check{CheckArtifact, CheckBuild},
			want: []string{
				"fleet/" + shopOrdersFlux + ":57: Kustomization/shop-orders-api: spec.sourceRef.name: reads OCIRepository shop/shop-orders-apii, which no fleet file defines: Flux would not apply it",
				"fleet/" + ordersKust + ":1: warning: no Flux Kustomization builds this folder",
			},
		},
		{
			name: "an OCIRepository without the annotation",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "    fleetwright.io/artifact-path: apps/prod-eu/shop/orders/api\n", "")
			},
			checks: []Check{CheckArtifact, CheckBuild},
			want: []string{
				"fleet/" + shopOrdersFlux + ":50: info: Kustomization/shop-orders-api: spec.path: not built: its source is OCIRepository shop/shop-orders-api, which names no fleet folder to build from (annotation fleetwright.io/artifact-path)",
				"fleet/" + ordersKust + ":1: warning: no Flux Kustomization builds this folder",
			},
		},
		{
			name: "objects of an artifact's folder are checked where they are",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersAPIFile, "        name: api\n", "        name: api\n        imagePullPolicyy: Always\n")
				edit(t, f, ordersAPIFile, "orders-api:2.4.1", "orders-api:latest")
			},
			checks: []Check{CheckAPI, CheckForbidLatest},
			want: []string{
				"fleet/" + ordersAPIFile + ":35: Deployment/orders-api: spec.template.spec.containers[0].image: image myorg/orders-api:latest uses the mutable latest tag; pin a version (policy forbid_latest)",
				"fleet/" + ordersAPIFile + ":44: Deployment/orders-api: spec.template.spec.containers[0].imagePullPolicyy: unknown field",
			},
		},
		{
			name: "a build reads nothing outside the artifact",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersKust, "resources:\n", "resources:\n- ../worker/deployment-orders-worker.yaml\n")
			},
			checks: []Check{CheckBuild},
			want: []string{"fleet/" + shopOrdersFlux + ":51: Kustomization/shop-orders-api: spec.path: kustomize build fleet/apps/prod-eu/shop/orders/api (the artifact of OCIRepository shop-orders-api): " +
				"accumulating resources: accumulation err='accumulating resources from '../worker/deployment-orders-worker.yaml': security; file 'fleet/apps/prod-eu/shop/orders/worker/deployment-orders-worker.yaml' " +
				"is not in or below 'fleet/apps/prod-eu/shop/orders/api'': must build at directory: 'fleet/apps/prod-eu/shop/orders/worker/deployment-orders-worker.yaml': file is not directory"},
		},
		{
			name: "API rules of the OCIRepository",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "url: oci://ghcr.io/myorg/fleet\n", "url: ghcr.io/myorg/fleet\n  provider: github\n  timeout: 1h\n")
				edit(t, f, shopOrdersFlux, "  interval: 10m0s\n  ref:", "  interval: 10us\n  ref:")
				editLine(t, f, shopOrdersFlux, apiDigestLine, "    digest: sha256:abc\n")
			},
			checks: []Check{CheckAPI},
			want: []string{
				"fleet/" + shopOrdersFlux + `:23: OCIRepository/shop-orders-api: spec.interval: "10us" is not a duration in ms, s, m or h (the CRD's pattern ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$)`,
				"fleet/" + shopOrdersFlux + `:25: OCIRepository/shop-orders-api: spec.ref.digest: "sha256:abc" is not a digest sha256:<64 hex digits>: source-controller cannot pull it`,
				"fleet/" + shopOrdersFlux + `:28: OCIRepository/shop-orders-api: spec.url: "ghcr.io/myorg/fleet" must start with oci:// (the CRD's pattern ^oci://.*$)`,
				"fleet/" + shopOrdersFlux + `:29: OCIRepository/shop-orders-api: spec.provider: unsupported value "github": must be "generic", "aws", "azure" or "gcp"`,
				"fleet/" + shopOrdersFlux + `:30: OCIRepository/shop-orders-api: spec.timeout: "1h" is not a duration in ms, s or m (the CRD's pattern ^([0-9]+(\.[0-9]+)?(ms|s|m))+$)`,
			},
		},
		{
			name: "a Flux file of the project edited", project: true,
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "  timeout: 10m0s\n", "  timeout: 15m0s\n")
			},
			checks: []Check{CheckArtifact, CheckProjects},
			want: []string{"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: pins sha256:PINNED, but the *.yaml files of " +
				"fleet/" + shopFlux + " pack to sha256:OTHER: Flux applies content that the fleet's files do not show; " + fixArtifact},
		},
		{
			name: "a Flux file of the project edited, with the specs", project: true,
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "  timeout: 10m0s\n", "  timeout: 15m0s\n")
			},
			opts:   func(o *Options) { o.Apps = &Apps{} },
			checks: []Check{CheckArtifact, CheckProjects},
			want: []string{"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: pins sha256:PINNED, but the *.yaml files of " +
				"fleet/" + shopFlux + " pack to sha256:OTHER: Flux applies content that the fleet's files do not show; " +
				"the specs render these files otherwise (changed: orders.yaml); " + fixArtifact},
		},
		{
			name: "a Flux file of the project deleted and one added, with the specs", project: true,
			mutate: func(t testing.TB, f map[string][]byte) {
				f[shopFlux+"/orders2.yaml"] = f[shopOrdersFlux]
				delete(f, shopOrdersFlux)
			},
			opts:   func(o *Options) { o.Apps = &Apps{} },
			checks: []Check{CheckArtifact},
			want: []string{"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: pins sha256:PINNED, but the *.yaml files of " +
				"fleet/" + shopFlux + " pack to sha256:OTHER: Flux applies content that the fleet's files do not show; " +
				"the specs render these files otherwise (not rendered: orders2.yaml; missing: orders.yaml); " + fixArtifact},
		},
		{
			name: "the project's digest edited, with the specs", project: true,
			mutate: func(t testing.TB, f map[string][]byte) {
				editLine(t, f, shopProject, apiDigestLine, "    digest: sha256:"+strings.Repeat("0", 64)+"\n")
			},
			opts:   func(o *Options) { o.Apps = &Apps{} },
			checks: []Check{CheckArtifact},
			want: []string{"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: pins sha256:OTHER, but the *.yaml files of " +
				"fleet/" + shopFlux + " pack to sha256:PINNED: Flux applies content that the fleet's files do not show; " +
				"the specs render these files as they are: the pinned digest is what differs; " + fixArtifact},
		},
		{
			name: "files added by hand to the project's Flux folder", project: true,
			mutate: func(t testing.TB, f map[string][]byte) {
				f[shopFlux+"/extra.yaml"] = []byte(handAdded)
				// Not in the artifact: a file of another name, and a sub-folder.
				f[shopFlux+"/README.md"] = []byte("notes\n")
				f[shopFlux+"/notes/extra.yaml"] = []byte(handAdded)
			},
			checks: []Check{CheckArtifact, CheckProjects},
			want: []string{"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: pins sha256:PINNED, but the *.yaml files of " +
				"fleet/" + shopFlux + " pack to sha256:OTHER: Flux applies content that the fleet's files do not show; without extra.yaml, " +
				"which render did not write, they pack to the pinned digest: render leaves such files out of the artifact, move them out of the folder"},
		},
		{
			name: "objects of the project's Flux files are checked where they are",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "  timeout: 10m0s\n", "  timeout: 10m0s\n  waitt: true\n")
				edit(t, f, shopOrdersFlux, "  interval: 10m0s\n  ref:", "  interval: 10us\n  ref:")
			},
			checks: []Check{CheckAPI, CheckBuild},
			want: []string{
				"fleet/" + shopOrdersFlux + `:23: OCIRepository/shop-orders-api: spec.interval: "10us" is not a duration in ms, s, m or h (the CRD's pattern ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$)`,
				"fleet/" + shopOrdersFlux + ":60: Kustomization/shop-orders-api: spec.waitt: unknown field",
			},
		},
		{
			name: "a project's build reads nothing outside its artifact", project: true,
			mutate: func(t testing.TB, f map[string][]byte) {
				f[shopFlux+"/kustomization.yaml"] = []byte("resources:\n- orders.yaml\n- old/extra.yaml\n")
				f[shopFlux+"/old/extra.yaml"] = []byte(handAdded)
			},
			checks: []Check{CheckBuild},
			want: []string{"fleet/" + shopProject + ":75: Kustomization/project-shop: spec.path: kustomize build fleet/" + shopFlux + " (the artifact of OCIRepository project-shop): " +
				"accumulating resources: accumulation err='accumulating resources from 'old/extra.yaml': security; file 'fleet/" + shopFlux + "/old/extra.yaml' is not in the artifact, " +
				"which holds only the *.yaml files of 'fleet/" + shopFlux + "'': must build at directory: 'fleet/" + shopFlux + "/old/extra.yaml': file is not directory"},
		},
		{
			name:   "an app's Flux objects in both places",
			mutate: func(t testing.TB, f map[string][]byte) { f[shopOrders] = f[shopOrdersFlux] },
			checks: []Check{CheckProjects},
			want: []string{"fleet/" + shopOrders + ":2: app prod-eu/shop/orders has its Flux objects both here, applied by the cluster's root Kustomization, and in " +
				"fleet/" + shopOrdersFlux + ", applied by Kustomization project-shop: two Kustomizations would apply the same objects and fight over them, " +
				"each pruning them when its file goes; keep one: render moves them in two steps, this file first marked kustomize.toolkit.fluxcd.io/prune: disabled, then deleted (see docs/fleet.md)"},
		},
		{
			name: "a project file without the project's source",
			mutate: func(t testing.TB, f map[string][]byte) {
				f[shopProject] = f[shopProject][:strings.Index(string(f[shopProject]), "---\n")]
				delete(f, "clusters/prod-eu/projects/my-project.yaml")
			},
			checks: []Check{CheckProjects},
			want: []string{
				"fleet/apps/prod-eu/my-project/_flux/my-api.yaml:2: nothing applies app prod-eu/my-project/my-api's Flux objects: the fleet has no project file " +
					"fleet/clusters/prod-eu/projects/my-project.yaml to hold the project's source (an OCIRepository built from fleet/apps/prod-eu/my-project/_flux and the Kustomization project-my-project that applies it); " + fixProject,
				"fleet/" + shopFlux + "/analytics.yaml:2: nothing applies app prod-eu/shop/analytics's Flux objects: " + noShopSource,
				"fleet/" + shopFlux + "/my-api.yaml:2: nothing applies app prod-eu/shop/my-api's Flux objects: " + noShopSource,
				"fleet/" + shopOrdersFlux + ":2: nothing applies app prod-eu/shop/orders's Flux objects: " + noShopSource,
				"fleet/" + shopFlux + "/reports.yaml:2: nothing applies app prod-eu/shop/reports's Flux objects: " + noShopSource,
				"fleet/" + shopFlux + "/storefront.yaml:2: nothing applies app prod-eu/shop/storefront's Flux objects: " + noShopSource,
			},
		},
		{
			name: "a project source that no Kustomization reads",
			mutate: func(t testing.TB, f map[string][]byte) {
				d := string(f[shopProject])
				f[shopProject] = []byte(d[:strings.LastIndex(d, "---\n")])
			},
			checks: []Check{CheckProjects},
			want: []string{
				"fleet/" + shopFlux + "/analytics.yaml:2: nothing applies app prod-eu/shop/analytics's Flux objects: " + unreadShopSource,
				"fleet/" + shopFlux + "/my-api.yaml:2: nothing applies app prod-eu/shop/my-api's Flux objects: " + unreadShopSource,
				"fleet/" + shopOrdersFlux + ":2: nothing applies app prod-eu/shop/orders's Flux objects: " + unreadShopSource,
				"fleet/" + shopFlux + "/reports.yaml:2: nothing applies app prod-eu/shop/reports's Flux objects: " + unreadShopSource,
				"fleet/" + shopFlux + "/storefront.yaml:2: nothing applies app prod-eu/shop/storefront's Flux objects: " + unreadShopSource,
			},
		},
		{
			name: "a Kustomization of a project with a source reads the GitRepository",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "  path: ./\n  prune: true\n  retryInterval: 1m0s\n  serviceAccountName: flux-reconciler\n  sourceRef:\n    kind: OCIRepository\n    name: shop-orders-api\n",
					"  path: ./fleet/apps/prod-eu/shop/orders/api\n  prune: true\n  retryInterval: 1m0s\n  serviceAccountName: flux-reconciler\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n    namespace: flux-system\n")
			},
			checks: []Check{CheckProjects, CheckBuild},
			want: []string{"fleet/" + shopOrdersFlux + ":57: warning: Kustomization/shop-orders-api: spec.sourceRef: reads the fleet's GitRepository flux-system/flux-system, " +
				"though platform.yaml has fleet.artifacts and project shop has its own source (OCIRepository project-shop): Flux applies it again on every fleet commit, " +
				"whatever the commit changed; re-render: render points each component's Kustomization at its own artifact"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, files := artifactsFleet(t)
			pinned := pinnedDigests(files)
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			if !tt.project {
				repinProjects(t, files)
			}
			opts := Options{Platform: &repo.Platform}
			if tt.opts != nil {
				tt.opts(&opts)
			}
			if opts.Apps != nil {
				opts.Apps.Repo = repo
			}
			rep := verifyFleet(t, files, opts)
			if diff := cmp.Diff(tt.want, normalize(lines(rep, tt.checks...), pinned)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// repinProjects pins each project's OCIRepository to the artifact of its
// Flux files as they are, as render pins it.
func repinProjects(t testing.TB, files map[string][]byte) {
	t.Helper()
	for p, data := range files {
		if !strings.HasPrefix(p, "clusters/prod-eu/projects/") {
			continue
		}
		m := regexp.MustCompile(`fleetwright.io/artifact-path: (\S+)`).FindSubmatch(data)
		if m == nil {
			continue
		}
		dir := string(m[1])
		var in []artifact.File
		for _, q := range slices.Sorted(maps.Keys(files)) {
			if name, ok := strings.CutPrefix(q, dir+"/"); ok && !strings.Contains(name, "/") && strings.HasSuffix(name, ".yaml") {
				in = append(in, artifact.File{Name: name, Data: files[q]})
			}
		}
		a, err := artifact.Build(dir, in)
		if err != nil {
			t.Fatal(err)
		}
		editLine(t, files, p, apiDigestLine, "    digest: "+a.Digest.String()+"\n")
	}
}

// basicKeychain answers every registry with one user and password.
type basicKeychain struct{ user, pass string }

func (k basicKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: k.user, Password: k.pass}, nil
}

// registryFleet renders the examples with their artifacts in a registry on
// loopback that wants a password, pushes all but the artifacts of the
// folders in skip, and returns the fleet and the registry.
func registryFleet(t *testing.T, skip ...string) (*load.Repo, map[string][]byte, *registrytest.Server) {
	t.Helper()
	srv := registrytest.New(t, registrytest.Options{Username: "ci", Password: "s3cret-pass", Delay: 2 * time.Millisecond})
	repo := artifactsRepo(t, srv.Host()+"/fleet")
	f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := f.Artifacts()
	if err != nil {
		t.Fatal(err)
	}
	arts = slices.DeleteFunc(arts, func(a *artifact.Artifact) bool { return slices.Contains(skip, a.Title) })
	auth := remote.WithAuth(&authn.Basic{Username: "ci", Password: "s3cret-pass"})
	if _, err := artifact.Push(t.Context(), srv.Host()+"/fleet", arts, artifact.PushOptions{Remote: []remote.Option{auth}}); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	return repo, f.Map(), srv
}

func withRegistry(kc authn.Keychain, concurrency int) func(*Options) {
	return func(o *Options) {
		o.Registry = &RegistryCheck{Client: registry.New(registry.Options{Keychain: kc}), Concurrency: concurrency}
	}
}

func TestArtifactsInRegistry(t *testing.T) {
	t.Parallel()
	good := basicKeychain{"ci", "s3cret-pass"}
	tests := []struct {
		name   string
		skip   []string
		mutate func(t testing.TB, files map[string][]byte)
		want   []string
	}{
		{name: "all there", want: []string{}},
		{
			name: "one not pushed",
			skip: []string{"apps/prod-eu/shop/orders/api"},
			want: []string{"fleet/" + shopOrdersFlux + ":25: OCIRepository/shop-orders-api: spec.ref.digest: the registry has no artifact HOST/fleet@sha256:PINNED: " +
				"source-controller cannot fetch it, and nothing of fleet/apps/prod-eu/shop/orders/api is applied; render pushes the artifact it pins (re-render)"},
		},
		{
			name: "Git differs from the registry's artifact",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, ordersAPIFile, "replicas: 2", "replicas: 3")
				f[ordersFolder+"extra.yaml"] = []byte(handAdded)
				delete(f, ordersFolder+"service-orders-api.yaml")
			},
			want: []string{
				"fleet/" + shopOrdersFlux + ":25: OCIRepository/shop-orders-api: spec.ref.digest: pins sha256:PINNED, but the files of fleet/apps/prod-eu/shop/orders/api pack to sha256:OTHER: " +
					"Flux applies content that the fleet's files do not show; " + fixArtifact,
				"fleet/" + shopOrdersFlux + ":25: OCIRepository/shop-orders-api: spec.ref.digest: the registry's artifact sha256:PINNED, which Flux applies, differs from the files of " +
					"fleet/apps/prod-eu/shop/orders/api (changed: deployment-orders-api.yaml; only in the artifact: service-orders-api.yaml; only in Git: extra.yaml); " + fixArtifact,
			},
		},
		{
			name: "a project's artifact not pushed",
			skip: []string{shopFlux},
			want: []string{"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: the registry has no artifact HOST/fleet@sha256:PINNED: " +
				"source-controller cannot fetch it, and nothing of fleet/" + shopFlux + " is applied; render pushes the artifact it pins (re-render)"},
		},
		{
			name: "Git differs from the registry's project artifact",
			mutate: func(t testing.TB, f map[string][]byte) {
				edit(t, f, shopOrdersFlux, "  timeout: 10m0s\n", "  timeout: 15m0s\n")
				f[shopFlux+"/extra.yaml"] = []byte(handAdded)
				f[shopFlux+"/README.md"] = []byte("not in the artifact\n")
				f[shopFlux+"/web.yaml"] = f[shopFlux+"/storefront.yaml"]
				delete(f, shopFlux+"/storefront.yaml")
			},
			want: []string{
				"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: pins sha256:PINNED, but the *.yaml files of fleet/" + shopFlux + " pack to sha256:OTHER: " +
					"Flux applies content that the fleet's files do not show; " + fixArtifact,
				"fleet/" + shopProject + ":56: OCIRepository/project-shop: spec.ref.digest: the registry's artifact sha256:PINNED, which Flux applies, differs from the *.yaml files of " +
					"fleet/" + shopFlux + " (changed: orders.yaml; only in the artifact: storefront.yaml; only in Git: extra.yaml, web.yaml); " + fixArtifact,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, files, srv := registryFleet(t, tt.skip...)
			pinned := pinnedDigests(files)
			if tt.mutate != nil {
				tt.mutate(t, files)
			}
			opts := Options{Platform: &repo.Platform}
			withRegistry(good, 2)(&opts)
			rep := verifyFleet(t, files, opts)
			got := normalize(lines(rep, CheckArtifact), pinned)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], srv.Host(), "HOST")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if want := 12 - len(tt.skip); rep.Stats.InRegistry != want {
				t.Errorf("%d artifacts found in the registry, want %d", rep.Stats.InRegistry, want)
			}
			if w := srv.Writes(); len(w) > 0 {
				t.Errorf("verify wrote to the registry: %v", w)
			}
			var heads, pulls int
			for _, r := range srv.Requests() {
				switch {
				case r.Method == http.MethodHead && strings.Contains(r.Path, "/manifests/sha256:"):
					heads++
				case r.Method == http.MethodGet && strings.Contains(r.Path, "/manifests/"), strings.Contains(r.Path, "/blobs/"):
					pulls++
				}
			}
			if heads != 12 { // 10 components' and 2 projects'
				t.Errorf("%d manifest HEAD requests, want one per artifact (12)", heads)
			}
			if wantPull := tt.mutate != nil; (pulls > 0) != wantPull {
				t.Errorf("%d pull requests; want some only where Git differs", pulls)
			}
			if n := srv.MaxInFlight(); n > 2 {
				t.Errorf("%d requests in flight at once, more than the concurrency of 2", n)
			}
		})
	}
}

// A registry that refuses the credentials stops the run: verify cannot say
// whether the artifacts are there. The error never shows a password.
func TestArtifactsRegistryRefuses(t *testing.T) {
	t.Parallel()
	repo, files, srv := registryFleet(t)
	for _, kc := range []authn.Keychain{basicKeychain{"ci", "wrong-pass"}, authn.NewMultiKeychain()} {
		opts := Options{Platform: &repo.Platform, FleetDir: golden.TempFiles(t, files), FleetPath: "fleet"}
		withRegistry(kc, 0)(&opts)
		_, err := Run(t.Context(), opts)
		if err == nil || !strings.Contains(err.Error(), "looking up the artifact "+srv.Host()+"/fleet@sha256:") ||
			!strings.Contains(err.Error(), "401 Unauthorized") || strings.Contains(err.Error(), "pass") {
			t.Errorf("keychain %v: error %v, want an authentication error without the password", kc, err)
		}
	}
	srv.Close()
	opts := Options{Platform: &repo.Platform, FleetDir: golden.TempFiles(t, files), FleetPath: "fleet"}
	withRegistry(basicKeychain{"ci", "s3cret-pass"}, 0)(&opts)
	if _, err := Run(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("closed registry: error %v, want connection refused", err)
	}
}

// An OCIRepository pinning an image that is not a Flux artifact is a
// finding that says so.
func TestArtifactsRegistryNotFlux(t *testing.T) {
	t.Parallel()
	repo, files, srv := registryFleet(t)
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(srv.Host() + "/fleet:not-flux")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: "ci", Password: "s3cret-pass"})); err != nil {
		t.Fatal(err)
	}
	editLine(t, files, shopOrdersFlux, apiDigestLine, "    digest: "+d.String()+"\n")
	opts := Options{Platform: &repo.Platform}
	withRegistry(basicKeychain{"ci", "s3cret-pass"}, 0)(&opts)
	rep := verifyFleet(t, files, opts)
	want := "fleet/" + shopOrdersFlux + ":25: OCIRepository/shop-orders-api: spec.ref.digest: what the registry holds at this digest is not an artifact render writes: " + srv.Host() + "/fleet@" + d.String() + `: config media type "application/vnd.docker.container.image.v1+json", not Flux's "application/vnd.cncf.flux.config.v1+json"`
	if got := lines(rep, CheckArtifact); !slices.Contains(got, want) {
		t.Errorf("findings %q\nwant among them %q", got, want)
	}
}
