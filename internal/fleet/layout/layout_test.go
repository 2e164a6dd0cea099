package layout_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec"
)

var platform = &spec.Platform{Clusters: []spec.Cluster{{Name: "prod", Path: "clusters/prod"}, {Name: "edge", Path: "sites/edge"}}}

func Example() {
	fmt.Println(layout.ComponentDir("prod", "shop", "web", "site"))
	fmt.Println(layout.ObjectFile("Deployment", "web-site"))
	fmt.Println(layout.AppFile(platform, "edge", "shop", "web"))
	fmt.Println(layout.ProjectFile(platform, "prod", "shop"))
	fmt.Println(layout.ProjectDir("prod", "shop"))
	fmt.Println(layout.ManagedDirs(platform))
	// Output:
	// apps/prod/shop/web/site
	// deployment-web-site.yaml
	// sites/edge/apps/shop-web.yaml
	// clusters/prod/projects/shop.yaml
	// apps/prod/shop/_project
	// [apps/edge apps/prod clusters/prod/apps clusters/prod/projects sites/edge/apps sites/edge/projects]
}

func TestAppOfAndClusterOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, app, cluster string }{
		{"apps/prod/shop/web/site/deployment-web-site.yaml", "prod/shop/web", "prod"},
		{"apps/prod/shop/web/site/kustomization.yaml", "prod/shop/web", "prod"},
		{"apps/prod/shop/_project/namespace-shop.yaml", "", "prod"},
		{"sites/edge/apps/shop-web.yaml", "", "edge"},
		{"clusters/prod/flux-system/gotk.yaml", "", "prod"},
		{"apps/prod/shop/notes.txt", "", "prod"},
		{"README.md", "", ""},
	} {
		if got := layout.AppOf(tc.file); got != tc.app {
			t.Errorf("AppOf(%q) = %q, want %q", tc.file, got, tc.app)
		}
		if got := layout.ClusterOf(platform, tc.file); got != tc.cluster {
			t.Errorf("ClusterOf(%q) = %q, want %q", tc.file, got, tc.cluster)
		}
	}
	got := layout.AppsOf([]string{"apps/b/p/x/c/f.yaml", "apps/a/p/y/c/f.yaml", "apps/b/p/x/d/f.yaml", "README.md"})
	if diff := cmp.Diff([]string{"a/p/y", "b/p/x"}, got); diff != "" {
		t.Errorf("AppsOf (-want +got):\n%s", diff)
	}
}

func TestClusterDirOfAnUnlistedCluster(t *testing.T) {
	t.Parallel()
	if got := layout.AppFile(platform, "lab", "shop", "web"); got != "clusters/lab/apps/shop-web.yaml" {
		t.Errorf("AppFile = %q", got)
	}
}

func TestInComponentDir(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"apps/prod/shop/api/web/notes.yaml":    true,
		"apps/prod/shop/api/web/extra/cm.yaml": true,
		"apps/prod/shop/api/notes.yaml":        false,
		"apps/prod/shop/notes.txt":             false,
		"apps/prod/shop/_project/x/y.yaml":     false,
		"clusters/prod/apps/shop-api.yaml":     false,
		"clusters/prod/flux-system/a/b/c.yaml": false,
	} {
		if got := layout.InComponentDir(p); got != want {
			t.Errorf("InComponentDir(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestFluxDirOfAndAbove(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, of, above string }{
		{"apps/c/p/_flux/a.yaml", "apps/c/p/_flux", "apps/c/p/_flux"},
		{"apps/c/p/_flux/x/y.yaml", "", "apps/c/p/_flux"},
		{"apps/c/p/_flux/x/y/z.yaml", "", "apps/c/p/_flux"},
		{"apps/c/p/_flux/", "apps/c/p/_flux", "apps/c/p/_flux"},
		{"apps/c/p/_flux", "", ""},
		{"apps/c/p/_fluxes/a.yaml", "", ""},
		{"apps/c/p/_project/n.yaml", "", ""},
		{"apps/c/p/a/web/k.yaml", "", ""},
		{"apps/c/p/a/_flux/k.yaml", "", ""},
		{"apps/c/_flux/a.yaml", "", ""},
		{"x/c/p/_flux/a.yaml", "", ""},
		{"x/apps/c/p/_flux/a.yaml", "", ""},
		{"clusters/c/apps/p-a.yaml", "", ""},
		{"", "", ""},
	} {
		if got := layout.FluxDirOf(tc.file); got != tc.of {
			t.Errorf("FluxDirOf(%q) = %q, want %q", tc.file, got, tc.of)
		}
		if got := layout.FluxDirAbove(tc.file); got != tc.above {
			t.Errorf("FluxDirAbove(%q) = %q, want %q", tc.file, got, tc.above)
		}
	}
}

func TestPruneDisabledLineIsTheWrittenMark(t *testing.T) {
	t.Parallel()
	obj := map[string]any{"kind": "Kustomization", "metadata": map[string]any{
		"name":        "web",
		"annotations": map[string]any{layout.PruneAnnotation: layout.PruneDisabled, "fleetwright.io/project": "shop"},
	}}
	data, err := manifest.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) == layout.PruneDisabledLine {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("%d lines are %q in\n%s", lines, layout.PruneDisabledLine, data)
	}
}

func TestReadyExprDigest(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	expr := layout.AppliedReadyExpr(digest)
	if got, ok := layout.ReadyExprDigest(expr); !ok || got != digest {
		t.Errorf("ReadyExprDigest(AppliedReadyExpr(%s)) = %q, %t", digest, got, ok)
	}
	for _, other := range []string{
		"",
		"dep.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
		expr + " && true", // edited by hand: not render's expression
		strings.Replace(expr, "'Ready'", "'Healthy'", 1),
	} {
		if got, ok := layout.ReadyExprDigest(other); ok {
			t.Errorf("ReadyExprDigest(%q) = %q, want none", other, got)
		}
	}
}

func TestAppRef(t *testing.T) {
	t.Parallel()
	a := layout.App{Cluster: "prod", AppRef: layout.AppRef{Project: "shop", Name: "api"}}
	if got := a.Key(); got != "prod/shop/api" {
		t.Errorf("Key = %q", got)
	}
	if got := a.Ref(); got != "shop/api" {
		t.Errorf("Ref = %q", got)
	}
	if got, want := a.Sibling("db"), (layout.App{Cluster: "prod", AppRef: layout.AppRef{Project: "shop", Name: "db"}}); got != want {
		t.Errorf("Sibling = %+v, want %+v", got, want)
	}
	b, err := json.Marshal(a.AppRef)
	if err != nil || string(b) != `{"project":"shop","name":"api"}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
	if !a.Named() || (layout.AppRef{Project: "shop"}).Named() || (layout.AppRef{Name: "api"}).Named() {
		t.Error("Named: want true for shop/api only")
	}
	got, err := layout.ParseRef("shop/api")
	if err != nil || got != a.AppRef {
		t.Errorf("ParseRef(shop/api) = %+v, %v", got, err)
	}
	for _, s := range []string{"", "shop", "shop/", "/api", "prod/shop/api", "shop//api"} {
		if r, err := layout.ParseRef(s); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", s, r)
		} else if want := fmt.Sprintf("%q is not an app: write PROJECT/APP", s); err.Error() != want {
			t.Errorf("ParseRef(%q): %v, want %s", s, err, want)
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	got, err := layout.ParseKey("prod/shop/api")
	if want := (layout.App{Cluster: "prod", AppRef: layout.AppRef{Project: "shop", Name: "api"}}); err != nil || got != want {
		t.Errorf("ParseKey(prod/shop/api) = %+v, %v; want %+v", got, err, want)
	}
	for _, s := range []string{"", "prod", "shop/api", "/shop/api", "prod//api", "prod/shop/", "prod/shop/api/web"} {
		if a, err := layout.ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) = %+v, want an error", s, a)
		} else if want := fmt.Sprintf("%q is not an app on a cluster: write CLUSTER/PROJECT/APP", s); err.Error() != want {
			t.Errorf("ParseKey(%q): %v, want %s", s, err, want)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"prod/shop/api", "shop/api", "a/b/c/d", "//", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := layout.ParseKey(s)
		if err != nil {
			return
		}
		if a.Cluster == "" || !a.Named() || a.Key() != s {
			t.Errorf("ParseKey(%q) = %+v, which writes %q", s, a, a.Key())
		}
	})
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"shop/api", "shop", "a/b/c", "/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := layout.ParseRef(s)
		if err != nil {
			return
		}
		if r.Project == "" || r.Name == "" || r.Ref() != s {
			t.Errorf("ParseRef(%q) = %+v, which writes %q", s, r, r.Ref())
		}
	})
}
