package lifecycle

import (
	"fmt"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// TestAppMatcher: APP, PROJECT/APP and CLUSTER/PROJECT/APP each match the
// apps they name, and anything else is refused with the forms to write.
func TestAppMatcher(t *testing.T) {
	t.Parallel()
	app := func(cluster, project, name string) *load.LoadedApp {
		return &load.LoadedApp{Cluster: cluster, Project: project, Spec: spec.App{Name: name}}
	}
	apps := []*load.LoadedApp{app("prod", "shop", "api"), app("stage", "shop", "api"), app("prod", "blog", "api"), app("prod", "shop", "web")}
	for addr, want := range map[string][]int{
		"api":            {0, 1, 2},
		"shop/api":       {0, 1},
		"prod/shop/api":  {0},
		"stage/blog/api": nil,
	} {
		match, named, err := appMatcher(addr)
		if err != nil {
			t.Fatalf("appMatcher(%q): %v", addr, err)
		}
		var got []int
		for i, a := range apps {
			if match(a) {
				got = append(got, i)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || named.Name != "api" {
			t.Errorf("appMatcher(%q) matches %v, names %+v; want %v", addr, got, named, want)
		}
	}
	if _, named, _ := appMatcher("prod/shop/api"); named != (layout.App{Cluster: "prod", AppRef: layout.AppRef{Project: "shop", Name: "api"}}) {
		t.Errorf("prod/shop/api names %+v", named)
	}
	for _, addr := range []string{"", "/", "shop/", "/api", "prod//api", "a/b/c/d"} {
		_, _, err := appMatcher(addr)
		if want := fmt.Sprintf("%q is not an app: write APP, PROJECT/APP or CLUSTER/PROJECT/APP", addr); err == nil || err.Error() != want {
			t.Errorf("appMatcher(%q): %v, want %s", addr, err, want)
		}
	}
}
