package layout_test

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path string
		want layout.Location
	}{
		{"apps/prod/shop/web/api/deployment-web-api.yaml", layout.Location{Cluster: "prod", Project: "shop", App: "web", Component: "api", Rest: "deployment-web-api.yaml"}},
		{"apps/prod/shop/web/api/files/a/b.conf", layout.Location{Cluster: "prod", Project: "shop", App: "web", Component: "api", Rest: "files/a/b.conf"}},
		{"apps/prod/shop/web/release.yaml", layout.Location{Cluster: "prod", Project: "shop", App: "web", Rest: "release.yaml"}},
		{"apps/prod/shop/_flux/web.yaml", layout.Location{Cluster: "prod", Project: "shop", Folder: "_flux", Rest: "web.yaml"}},
		{"apps/prod/shop/_project/namespace-shop.yaml", layout.Location{Cluster: "prod", Project: "shop", Folder: "_project", Rest: "namespace-shop.yaml"}},
		{"apps/prod/shop/kustomization.yaml", layout.Location{Cluster: "prod", Project: "shop", Rest: "kustomization.yaml"}},
		{"apps/prod/x.yaml", layout.Location{Cluster: "prod", Rest: "x.yaml"}},
		{"apps/x.yaml", layout.Location{Rest: "x.yaml"}},
		{"clusters/prod/apps/shop-web.yaml", layout.Location{Cluster: "prod", Rest: "apps/shop-web.yaml"}},
		{"platform/flux.yaml", layout.Location{Rest: "platform/flux.yaml"}},
		{"README.md", layout.Location{Rest: "README.md"}},
		{"previews/prev/pr-12/apps/prev/shop-pr12/web/api/service-web-api.yaml",
			layout.Location{Preview: 12, Cluster: "prev", Project: "shop-pr12", App: "web", Component: "api", Rest: "service-web-api.yaml"}},
		{"previews/prev/pr-12/preview.yaml", layout.Location{Preview: 12, Rest: "preview.yaml"}},
		// Not a preview's folder: pr-012 is no pull request's name.
		{"previews/prev/pr-012/preview.yaml", layout.Location{Rest: "previews/prev/pr-012/preview.yaml"}},
	} {
		if got := layout.Parse(tt.path); got != tt.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
	}
}

// TestParseAllocatesNothing: verify parses the path of every object of a
// fleet, review asks InComponentDir of every file of both fleets.
func TestParseAllocatesNothing(t *testing.T) {
	p := "previews/prev/pr-12/apps/prev/shop-pr12/web/api/service-web-api.yaml"
	if n := testing.AllocsPerRun(100, func() { _ = layout.Parse(p) }); n != 0 {
		t.Errorf("Parse allocates %v times", n)
	}
	p = "apps/prod/shop/web/api/service-web-api.yaml"
	if n := testing.AllocsPerRun(100, func() { _ = layout.InComponentDir(p) }); n != 0 {
		t.Errorf("InComponentDir allocates %v times", n)
	}
}

func TestPathHelpersAgreeWithParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path, app, componentDir, fluxDir, fluxAbove string
	}{
		{"apps/prod/shop/web/api/deployment-web-api.yaml", "prod/shop/web", "apps/prod/shop/web/api", "", ""},
		{"apps/prod/shop/web/release.yaml", "prod/shop/web", "", "", ""},
		{"apps/prod/shop/_flux/web.yaml", "", "", "apps/prod/shop/_flux", "apps/prod/shop/_flux"},
		{"apps/prod/shop/_flux/extra/x.yaml", "", "", "", "apps/prod/shop/_flux"},
		{"previews/prev/pr-3/apps/prev/shop-pr3/web/api/x.yaml", "", "", "", ""},
		{"clusters/prod/apps/shop-web.yaml", "", "", "", ""},
	} {
		if got := layout.AppOf(tt.path); got != tt.app {
			t.Errorf("AppOf(%q) = %q, want %q", tt.path, got, tt.app)
		}
		if got := layout.ComponentDirOf(tt.path); got != tt.componentDir {
			t.Errorf("ComponentDirOf(%q) = %q, want %q", tt.path, got, tt.componentDir)
		}
		if got := layout.InComponentDir(tt.path); got != (tt.componentDir != "") {
			t.Errorf("InComponentDir(%q) = %v", tt.path, got)
		}
		if got := layout.FluxDirOf(tt.path); got != tt.fluxDir {
			t.Errorf("FluxDirOf(%q) = %q, want %q", tt.path, got, tt.fluxDir)
		}
		if got := layout.FluxDirAbove(tt.path); got != tt.fluxAbove {
			t.Errorf("FluxDirAbove(%q) = %q, want %q", tt.path, got, tt.fluxAbove)
		}
	}
}
