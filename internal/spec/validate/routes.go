package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkRoutes checks the ingresses' routes of an app: each goes to a
// workload of the app that exposes the port, and no host and path is
// routed twice, within one ingress or across the app's ingresses of one
// host.
func checkRoutes(a *load.LoadedApp, plat *spec.Platform, ps *load.Problems) {
	s, doc := &a.Spec, a.Doc
	type routed struct {
		component string
		at        load.Path
	}
	n, routes := 0, false
	for i := range s.Components {
		if c := &s.Components[i]; spec.IngressEnabled(c) {
			n++
			routes = routes || len(c.WorkloadSpec.Ingress.Routes) > 0
		}
	}
	if n < 2 && !routes {
		return // one ingress of one path: nothing to compare
	}
	var seen map[string]routed // host + path → the first route
	for i := range s.Components {
		c := &s.Components[i]
		if !spec.IngressEnabled(c) {
			continue
		}
		ing := c.WorkloadSpec.Ingress
		at := load.Path{"components", i, "workload_spec", "ingress"}
		if len(ing.Routes) > 0 && ing.Path != "" {
			ps.AddKey(doc, at.Child("path"), "set path or routes, not both: routes list every path of the host (add {path: %s} to them)", ing.Path)
		}
		host := load.IngressHost(a, c, plat)
		for j, r := range spec.IngressRoutes(c) {
			ra := at.Child("path")
			if !doc.Has(ra) {
				ra = at.Child(hostField(ing))
			}
			if len(ing.Routes) > 0 {
				ra = at.Child("routes").Child(j)
				checkRoute(a, c, r, ra, ps)
			}
			if r.Path == "" {
				continue
			}
			if seen == nil {
				seen = map[string]routed{}
			}
			key := host + "\x00" + strings.TrimSuffix(r.Path, "/")
			if prev, dup := seen[key]; dup {
				where := prev.at.String()
				if prev.component != c.Name {
					where = "component " + prev.component + ", " + where
				}
				p := ra
				if len(ing.Routes) > 0 {
					p = ra.Child("path")
				}
				ps.Add(doc, p, "host %s, path %s is already routed (%s); each path of a host goes to one place", host, r.Path, where)
				continue
			}
			seen[key] = routed{c.Name, ra}
		}
	}
}

// checkRoute checks one route of component c's ingress.
func checkRoute(a *load.LoadedApp, c *spec.Component, r spec.Route, at load.Path, ps *load.Problems) {
	doc := a.Doc
	if r.Path != "" && !strings.HasPrefix(r.Path, "/") {
		ps.Add(doc, at.Child("path"), "must start with /")
	}
	t := a.Component(r.Component)
	if t == nil {
		ps.Add(doc, at.Child("component"), "%s", unknownComponent(r.Component, &a.Spec))
		return
	}
	if t.Type != spec.TypeWorkload || t.WorkloadSpec == nil {
		ps.Add(doc, at.Child("component"), "component %s is a %s; a route goes to a workload's Service", t.Name, t.Type)
		return
	}
	names := spec.IngressPortNames(t.WorkloadSpec)
	field := at.Child("port")
	if r.Port == "" {
		field = at.Child("component")
		if !doc.Has(field) {
			field = at.Child("path")
		}
	}
	switch {
	case len(names) == 0:
		ps.Add(doc, field, "component %s has no TCP port on its Service for the route to reach; give it port, or ports with an exposed TCP entry", t.Name)
	case r.Port != "" && !slices.Contains(names, r.Port):
		msg := fmt.Sprintf("component %s has no TCP port %q on its Service; its ports: %s", t.Name, r.Port, strings.Join(names, ", "))
		if sug := hint.Suggest(r.Port, names); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		}
		ps.Add(doc, field, "%s", msg)
	}
}
