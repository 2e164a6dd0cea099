package validate_test

import (
	"slices"
	"testing"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Default ingress hosts depend on the components' names, not their order:
// the workload named as the app, else the first by name, gets the app's
// own address; the others get their name before it.
func TestIngressHostDependsOnNamesOnly(t *testing.T) {
	t.Parallel()
	plat := &spec.Platform{AppsDomain: "apps.test"}
	web := func(name, host string) spec.Component {
		return spec.Component{Name: name, Type: "workload", WorkloadSpec: &spec.WorkloadSpec{Ingress: &spec.Ingress{Enabled: true, Host: host}}}
	}
	hosts := func(name string, cs ...spec.Component) map[string]string {
		a := &load.LoadedApp{Spec: spec.App{Name: name, Components: cs}, Project: "shop"}
		out := map[string]string{}
		for i := range cs {
			out[cs[i].Name] = load.IngressHost(a, &cs[i], plat)
		}
		return out
	}
	for _, tc := range []struct {
		app   string
		comps []spec.Component
		want  map[string]string
	}{
		{app: "store", comps: []spec.Component{web("web", ""), web("admin", "")},
			want: map[string]string{"admin": "store-shop.apps.test", "web": "web-store-shop.apps.test"}},
		{app: "store", comps: []spec.Component{web("web", ""), web("store", ""), web("admin", "")},
			want: map[string]string{"store": "store-shop.apps.test", "web": "web-store-shop.apps.test", "admin": "admin-store-shop.apps.test"}},
		{app: "store", comps: []spec.Component{web("admin", "admin.example.com"), web("web", "")},
			want: map[string]string{"admin": "admin.example.com", "web": "store-shop.apps.test"}},
	} {
		got := hosts(tc.app, tc.comps...)
		reversed := slices.Clone(tc.comps)
		slices.Reverse(reversed)
		gotReversed := hosts(tc.app, reversed...)
		for name, want := range tc.want {
			if got[name] != want || gotReversed[name] != want {
				t.Errorf("app %s, component %s: host %q (%q with the components reversed), want %q", tc.app, name, got[name], gotReversed[name], want)
			}
		}
	}
}
