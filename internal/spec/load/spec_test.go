package load_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

func newLoader(t testing.TB, prefix string) *load.Loader { return spectest.CatalogLoader(t, prefix) }

func TestExamplesAreValid(t *testing.T) {
	t.Parallel()
	repo, ps := newLoader(t, "examples").Load(os.DirFS("../../../examples"))
	if len(ps) > 0 {
		t.Fatalf("examples have problems:\n%v", ps)
	}
	if len(repo.Apps) < 5 {
		t.Fatalf("loaded %d apps", len(repo.Apps))
	}
	seed := repo.App("prod-eu", "my-project", "my-api")
	if seed == nil {
		t.Fatal("the seed's JSON body (project_id mapped to my-project) was not loaded")
	}
	if seed.Timeout.String() != "15m0s" || len(seed.Spec.Components) != 2 {
		t.Errorf("seed app decoded wrongly: %+v", seed)
	}
	// The graph orders postgres before api.
	var order []string
	for _, id := range repo.Order {
		if strings.HasPrefix(id, "prod-eu/my-project/my-api/") {
			order = append(order, strings.TrimPrefix(id, "prod-eu/my-project/my-api/"))
		}
	}
	if d := cmp.Diff([]string{"postgres", "api"}, order); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}

// The real applications' examples pass the policy checks, but for the
// stores and the tool that run one of a kind on purpose: the Boutique's
// cart Redis, MinIO, Sock Shop's databases and queue, and Plausible's
// PostgreSQL and ClickHouse (two replicas would be two stores), Mastodon's
// sidekiq (the one process of its scheduler queue, as its chart requires),
// and the Boutique's load generator, kept as upstream has it (no probes,
// one replica).
func TestRealAppExamplesPolicy(t *testing.T) {
	t.Parallel()
	l := spectest.Loader(t)
	_, ps := l.Load(os.DirFS("../../../examples/real-apps"))
	var got []string
	for _, p := range ps {
		got = append(got, p.Error())
	}
	const replicas = "runs 1 replica(s) on production cluster prod-eu and no HorizontalPodAutoscaler scales it; run at least 2 (policy production_replicas)"
	want := []string{
		"apps/analytics/plausible/app.yaml:11:5: warning: components[0].workload_spec: " + replicas,
		"apps/analytics/plausible/app.yaml:26:5: warning: components[1].workload_spec: " + replicas,
		"apps/boutique/shop/app.yaml:13:5: warning: components[0].workload_spec: " + replicas,
		`apps/boutique/shop/app.yaml:206:5: warning: components[11].workload_spec: container "loadgenerator" has no readinessProbe or livenessProbe (policy require_probes)`,
		"apps/boutique/shop/app.yaml:206:5: warning: components[11].workload_spec: " + replicas,
		"apps/shop/objects/app.yaml:9:5: warning: components[0].workload_spec: " + replicas,
		"apps/social/mastodon/app.yaml:78:17: warning: components[4].workload_spec.replicas: " + replicas,
		"apps/sock-shop/socks/app.yaml:29:5: warning: components[1].workload_spec: " + replicas,
		"apps/sock-shop/socks/app.yaml:55:5: warning: components[3].workload_spec: " + replicas,
		"apps/sock-shop/socks/app.yaml:98:5: warning: components[6].workload_spec: " + replicas,
		"apps/sock-shop/socks/app.yaml:137:5: warning: components[9].workload_spec: " + replicas,
		"apps/sock-shop/socks/app.yaml:155:5: warning: components[10].workload_spec: " + replicas,
		"apps/sock-shop/socks/app.yaml:197:5: warning: components[13].workload_spec: " + replicas,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// TestSeedYAMLMatchesJSON proves the YAML form of the seed body means the
// same as the JSON body.
func TestSeedYAMLMatchesJSON(t *testing.T) {
	t.Parallel()
	jsonRepo, ps := spectest.NotPolicy(newLoader(t, "").LoadFiles(map[string][]byte{
		"apps/my-project/my-api/app.json": mustRead(t, "../../../examples/apps/my-project/my-api/app.json"),
	}))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	yamlRepo, ps := spectest.NotPolicy(newLoader(t, "").Load(os.DirFS("testdata/seed-yaml")))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if d := cmp.Diff(jsonRepo.Apps[0].Spec, yamlRepo.Apps[0].Spec, cmp.AllowUnexported(spec.Quantity{})); d != "" {
		t.Errorf("YAML and JSON forms differ (-json +yaml):\n%s", d)
	}
	if got := jsonRepo.Apps[0].Project; got != "b2c3d4e5-0002-0000-0000-000000000000" {
		t.Errorf("project = %q; without a project_ids mapping the id is the project", got)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMemFS(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{"platform.yaml": []byte("x"), "apps/a/b/app.yaml": []byte("y"), "apps/a/c/app.json": []byte("z")}
	if err := fstest.TestFS(load.NewMemFSForTest(files), "platform.yaml", "apps/a/b/app.yaml", "apps/a/c/app.json"); err != nil {
		t.Fatal(err)
	}
}

// Every field of real applications, used as the contract allows, loads
// without a problem: the checks refuse only what is wrong.
func TestValidRealApplication(t *testing.T) {
	t.Parallel()
	repo, ps := newLoader(t, "").Load(os.DirFS("testdata/valid"))
	if len(ps) > 0 {
		t.Fatalf("problems:\n%v", ps)
	}
	a := repo.App(load.DefaultCluster, "shop", "store")
	if a == nil || len(a.Spec.Components) != 8 {
		t.Fatalf("the app did not load: %+v", repo.Apps)
	}
	api := a.Component("api").WorkloadSpec
	if c := api.Files[1].Content; c == nil || !strings.HasPrefix(*c, "server {") {
		t.Errorf("files[1].from was not read: %v", c)
	}
	// The job completes before the api starts.
	var order []string
	for _, id := range repo.Order {
		order = append(order, strings.TrimPrefix(id, "default/shop/store/"))
	}
	if i, j := slices.Index(order, "migrate"), slices.Index(order, "api"); i < 0 || j < 0 || i > j {
		t.Errorf("order %v: migrate does not come before api", order)
	}
}
