package validate

import (
	"fmt"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Service names share a namespace, the project's: a workload's Service
// (service.name, or <app>-<component>), the headless Service of a
// StatefulSet (<app>-<component>-headless), and the Services that addon
// charts create (a redis addon's <release>-master, -replicas and -headless).
// Two of them with one name would make one object of two, and every later
// check would pass; the loader refuses it at the field that names the
// later one.

// serviceCatalog is what an ExportCatalog may know of the Services an
// addon chart creates.
type serviceCatalog interface {
	AddonServices(addonType, release, namespace string, values map[string]any) (names []string, namespace2 string, ok bool)
}

// ServiceName is the name of a workload's Service.
func ServiceName(a *load.LoadedApp, c *spec.Component) string {
	if w := c.WorkloadSpec; w != nil && w.Service != nil && w.Service.Name != "" {
		return w.Service.Name
	}
	return layout.ObjectName(a.Spec.Name, c.Name)
}

type serviceOwner struct {
	a        *load.LoadedApp
	index    int    // of the component
	chart    string // the addon type, for a Service its chart creates
	headless bool
	byName   bool // the name is the workload's service.name
}

// kind names the Service for a problem on its component.
func (o serviceOwner) kind() string {
	switch {
	case o.chart != "":
		return "the chart's Service"
	case o.headless:
		return "the headless Service"
	}
	return "the Service"
}

// describe names the owner for a problem of app a.
func (o serviceOwner) describe(a *load.LoadedApp) string {
	c := o.a.Spec.Components[o.index].Name
	s := o.kind() + " of component " + c
	if o.chart != "" {
		s = fmt.Sprintf("a Service that the %s chart of component %s creates", o.chart, c)
	}
	if o.a != a {
		s += fmt.Sprintf(" in app %s (%s)", o.a.Spec.Name, o.a.Doc.File)
	}
	return s
}

// report puts the collision of o's Service name with other's at o's field.
func (o serviceOwner) report(name string, other serviceOwner, ps *load.Problems) {
	at, fix := load.Path{"components", o.index, "name"}, "rename one of the components"
	switch {
	case o.byName:
		at, fix = load.Path{"components", o.index, "workload_spec", "service", "name"}, "choose another service.name"
	case o.chart == "" && !o.headless:
		fix = "set service.name, or rename one of the components"
	}
	ps.Add(o.a.Doc, at, "%s %s of this component is also %s; %s", o.kind(), name, other.describe(o.a), fix)
}

func (l *checker) checkServiceNames(apps []*load.LoadedApp, ps *load.Problems) {
	type key struct{ cluster, namespace, name string }
	taken := map[key]serviceOwner{}
	stems := map[key]bool{} // the names up to a '-' of every name taken and chart's full name
	addStems := func(k key) {
		for j := range len(k.name) {
			if k.name[j] == '-' {
				stems[key{k.cluster, k.namespace, k.name[:j]}] = true
			}
		}
	}
	claim := func(k key, o serviceOwner) {
		prev, dup := taken[k]
		switch {
		case !dup:
			taken[k] = o
		case prev.a == o.a && prev.index == o.index:
		case prev.chart == "" && o.chart != "":
			// A chart's names are fixed: the workload can choose another.
			prev.report(k.name, o, ps)
		default:
			o.report(k.name, prev, ps)
		}
	}
	for _, a := range apps {
		for i, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if c.Type != spec.TypeWorkload || w == nil {
				continue
			}
			headless := w.Service != nil && w.Service.Type == spec.ServiceHeadless
			if w.ExposedPorts() || headless {
				k := key{a.Cluster, a.Project, ServiceName(a, &c)}
				claim(k, serviceOwner{a: a, index: i, headless: headless, byName: w.Service != nil && w.Service.Name != ""})
				addStems(k)
			}
			if w.Persistent() && !headless {
				name := layout.ObjectName(a.Spec.Name, c.Name) + "-headless"
				if len(name) > 63 {
					ps.Add(a.Doc, load.Path{"components", i, "name"}, "the StatefulSet's headless Service %s is %d characters; Kubernetes allows 63: shorten the app or component name", name, len(name))
					continue
				}
				k := key{a.Cluster, a.Project, name}
				claim(k, serviceOwner{a: a, index: i, headless: true})
				addStems(k)
			}
		}
	}
	sc, _ := l.Exports.(serviceCatalog)
	if sc == nil {
		return
	}
	// A chart's Services all start with its full name (the release, which
	// render passes as fullnameOverride): one can be another's name only
	// if that starts with the full name and '-'. Asking the catalog for
	// the chart's names only then keeps the common case cheap.
	type addon struct {
		a     *load.LoadedApp
		index int
		full  key
		ask   bool // the values choose names or namespaces: always ask
	}
	var addons []addon
	fulls := map[key]int{}
	for _, a := range apps {
		for i, c := range a.Spec.Components {
			if c.Type != spec.TypeAddon || c.AddonSpec == nil {
				continue
			}
			_, override := c.AddonSpec.Values["fullnameOverride"]
			_, nsOverride := c.AddonSpec.Values["namespaceOverride"]
			_, global := c.AddonSpec.Values["global"]
			ad := addon{a: a, index: i, full: key{a.Cluster, a.Project, layout.ObjectName(a.Spec.Name, c.Name)}, ask: override || nsOverride || global}
			addons = append(addons, ad)
			fulls[ad.full]++
			addStems(ad.full)
		}
	}
	for _, ad := range addons {
		need := ad.ask || stems[ad.full] || fulls[ad.full] > 1
		if _, dup := taken[ad.full]; dup {
			need = true
		}
		for j := 0; j < len(ad.full.name) && !need; j++ {
			if ad.full.name[j] == '-' && fulls[key{ad.full.cluster, ad.full.namespace, ad.full.name[:j]}] > 0 {
				need = true
			}
		}
		if !need {
			continue
		}
		c := &ad.a.Spec.Components[ad.index]
		names, ns, ok := sc.AddonServices(c.AddonSpec.Type, ad.full.name, ad.a.Project, c.AddonSpec.Values)
		if !ok {
			continue
		}
		for _, n := range names {
			claim(key{ad.a.Cluster, ns, n}, serviceOwner{a: ad.a, index: ad.index, chart: c.AddonSpec.Type})
		}
	}
}

// checkServiceAccounts refuses two components that create a ServiceAccount
// of one name in a namespace: one would overwrite the other's annotations.
func checkServiceAccounts(apps []*load.LoadedApp, ps *load.Problems) {
	type key struct{ cluster, namespace, name string }
	type owner struct {
		a     *load.LoadedApp
		index int
	}
	created := map[key]owner{}
	for _, a := range apps {
		for i, c := range a.Spec.Components {
			if c.WorkloadSpec == nil || c.WorkloadSpec.ServiceAccount == nil || !c.WorkloadSpec.ServiceAccount.Create {
				continue
			}
			name := c.WorkloadSpec.ServiceAccount.Name
			at := load.Path{"components", i, "workload_spec", "service_account", "name"}
			if name == "" {
				name, at = a.Spec.Name+"-"+c.Name, load.Path{"components", i, "workload_spec", "service_account", "create"}
			}
			k := key{a.Cluster, a.Project, name}
			prev, dup := created[k]
			if !dup {
				created[k] = owner{a, i}
				continue
			}
			where := "component " + prev.a.Spec.Components[prev.index].Name
			if prev.a != a {
				where += " of app " + prev.a.Spec.Name + " (" + prev.a.Doc.File + ")"
			}
			ps.Add(a.Doc, at, "ServiceAccount %s is created by %s too; share it with create: false here, or choose another name", name, where)
		}
	}
}
