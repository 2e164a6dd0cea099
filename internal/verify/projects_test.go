package verify

import (
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/generate"
)

// A fleet moving to a source per project is what the specs render at each
// of render's two steps, read as render reads the fleet before it: the
// first step keeps the app files in the cluster folder, marked to be kept
// from pruning (an info says to render again), the second moves them. A
// fleet whose app files were never moved is drift.
func TestProjectSourcesMove(t *testing.T) {
	t.Parallel()
	repo, _ := artifactsFleet(t)
	_, gitFleet := exampleFleet(t) // the root Kustomization applies the app files
	render := func(prev map[string][]byte) map[string][]byte {
		t.Helper()
		f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform, Previous: generate.FileIn(prev)})
		if err != nil {
			t.Fatal(err)
		}
		return f.Map()
	}
	first := render(gitFleet)
	second := render(first)
	// Only app orders had its Flux objects in the cluster folder.
	onlyOrders := maps.Clone(gitFleet)
	for p := range onlyOrders {
		if strings.HasPrefix(p, "clusters/prod-eu/apps/") && p != shopOrders {
			delete(onlyOrders, p)
		}
	}
	mixed := render(onlyOrders)

	const kept = ": info: OCIRepository/%s: metadata.annotations.kustomize.toolkit.fluxcd.io/prune: this app's Flux objects are kept from pruning while they move " +
		"to their project's source (the first of render's two steps); render again once Flux applied it to finish the move"
	info := func(file string, line int, name string) string {
		return "fleet/clusters/prod-eu/apps/" + file + ":" + itoa(line) + strings.Replace(kept, "%s", name, 1)
	}
	tests := []struct {
		name  string
		fleet map[string][]byte
		want  []string
	}{
		{name: "first step", fleet: first, want: []string{
			info("my-project-my-api.yaml", 10, "my-project-my-api-postgres"),
			info("shop-analytics.yaml", 10, "shop-analytics-etl"),
			info("shop-my-api.yaml", 10, "shop-my-api-postgres"),
			info("shop-orders.yaml", 10, "shop-orders-api"),
			info("shop-reports.yaml", 10, "shop-reports-cache"),
			info("shop-storefront.yaml", 10, "shop-storefront-web"),
		}},
		{name: "second step", fleet: second, want: []string{}},
		{name: "one app on its first step", fleet: mixed, want: []string{info("shop-orders.yaml", 10, "shop-orders-api")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := verifyFleet(t, maps.Clone(tt.fleet), Options{Platform: &repo.Platform, Apps: &Apps{Repo: repo}})
			if diff := cmp.Diff(tt.want, lines(rep, CheckDrift, CheckProjects, CheckArtifact, CheckDuplicate, CheckBuild)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if rep.Failed() {
				t.Errorf("failed: %v", lines(rep))
			}
		})
	}
	// The specs with fleet.artifacts do not render the fleet of the Git layout.
	rep := verifyFleet(t, maps.Clone(gitFleet), Options{Platform: &repo.Platform, Apps: &Apps{Repo: repo}})
	if drift := lines(rep, CheckDrift); !rep.Failed() || len(drift) == 0 {
		t.Errorf("the unmoved fleet: %d drift findings, failed %v; want drift", len(drift), rep.Failed())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
