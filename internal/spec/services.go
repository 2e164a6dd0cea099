package spec

import "fmt"

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
func ServiceName(a *LoadedApp, c *Component) string {
	if w := c.WorkloadSpec; w != nil && w.Service != nil && w.Service.Name != "" {
		return w.Service.Name
	}
	return a.Spec.Name + "-" + c.Name
}

type serviceOwner struct {
	a         *LoadedApp
	component string
	what      string // "the Service of component web", "a Service that the redis chart of component cache creates"
}

// describe names the owner for a problem of app a.
func (o serviceOwner) describe(a *LoadedApp) string {
	if o.a == a {
		return o.what
	}
	return fmt.Sprintf("%s in app %s (%s)", o.what, o.a.Spec.Name, o.a.Doc.File)
}

func (l *Loader) checkServiceNames(apps []*LoadedApp, ps *Problems) {
	taken := map[string]serviceOwner{} // cluster/namespace/name
	claim := func(a *LoadedApp, ns, name, kind string, o serviceOwner, at Path, fix string) {
		k := a.Cluster + "/" + ns + "/" + name
		if prev, dup := taken[k]; dup {
			if prev.a == a && prev.component == o.component {
				return
			}
			ps.Add(a.Doc, at, "%s %s of this component is also %s; %s", kind, name, prev.describe(a), fix)
			return
		}
		taken[k] = o
	}
	// Charts first: their names are fixed by the chart, so the problem
	// goes to the workload, which can choose another.
	sc, _ := l.Exports.(serviceCatalog)
	for _, a := range apps {
		for i, c := range a.Spec.Components {
			if c.Type != TypeAddon || c.AddonSpec == nil || sc == nil {
				continue
			}
			release := a.Spec.Name + "-" + c.Name
			names, ns, ok := sc.AddonServices(c.AddonSpec.Type, release, a.Project, c.AddonSpec.Values)
			if !ok {
				continue
			}
			o := serviceOwner{a: a, component: c.Name, what: fmt.Sprintf("a Service that the %s chart of component %s creates", c.AddonSpec.Type, c.Name)}
			for _, n := range names {
				claim(a, ns, n, "the chart's Service", o, Path{"components", i, "name"}, "rename one of the components")
			}
		}
	}
	for _, a := range apps {
		for i, c := range a.Spec.Components {
			w := c.WorkloadSpec
			if c.Type != TypeWorkload || w == nil {
				continue
			}
			at := Path{"components", i, "name"}
			fix := "set service.name, or rename one of the components"
			if w.Service != nil && w.Service.Name != "" {
				at = Path{"components", i, "workload_spec", "service", "name"}
				fix = "choose another service.name"
			}
			headless := w.Service != nil && w.Service.Type == ServiceHeadless
			if w.ExposedPorts() {
				what := "the Service"
				if headless {
					what = "the headless Service"
				}
				claim(a, a.Project, ServiceName(a, &c), what, serviceOwner{a: a, component: c.Name, what: what + " of component " + c.Name}, at, fix)
			}
			if w.Persistent() && !(headless && w.ExposedPorts()) {
				name := a.Spec.Name + "-" + c.Name + "-headless"
				at := Path{"components", i, "name"}
				if len(name) > 63 {
					ps.Add(a.Doc, at, "the StatefulSet's headless Service %s is %d characters; Kubernetes allows 63: shorten the app or component name", name, len(name))
					continue
				}
				claim(a, a.Project, name, "the headless Service", serviceOwner{a: a, component: c.Name, what: "the headless Service of component " + c.Name}, at, "rename one of the components")
			}
		}
	}
}
