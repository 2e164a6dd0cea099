package spec

import (
	"fmt"
	"slices"
	"strings"
)

// IngressPortNames lists the names of the TCP ports of a workload's
// Service, which an Ingress can send requests to: its container's exposed
// ports (http for port), then its sidecars'.
func IngressPortNames(w *WorkloadSpec) []string {
	var out []string
	add := func(ports []Port) {
		for _, p := range ports {
			if (p.Expose == nil || *p.Expose) && (p.Protocol == "" || p.Protocol == ProtocolTCP) && p.Name != "" {
				out = append(out, p.Name)
			}
		}
	}
	if w.Port > 0 {
		out = append(out, "http")
	} else {
		add(w.Ports)
	}
	for i := range w.Sidecars {
		add(w.Sidecars[i].Ports)
	}
	return out
}

// DefaultIngressPort is the Service port an Ingress sends a workload's
// requests to when a route names none: the one named http, else the first
// TCP one; "" when there is none.
func DefaultIngressPort(w *WorkloadSpec) string {
	names := IngressPortNames(w)
	if slices.Contains(names, "http") {
		return "http"
	}
	if len(names) > 0 {
		return names[0]
	}
	return ""
}

// IngressRoutes returns the routes of a component's ingress, each naming
// its component: its routes, else one of its path (default /) to itself.
func IngressRoutes(c *Component) []Route {
	ing := c.WorkloadSpec.Ingress
	if len(ing.Routes) == 0 {
		p := ing.Path
		if p == "" {
			p = "/"
		}
		return []Route{{Path: p, Component: c.Name}}
	}
	out := slices.Clone(ing.Routes)
	for i := range out {
		if out[i].Component == "" {
			out[i].Component = c.Name
		}
	}
	return out
}

// HostCertificateOwner is the component of an app whose Ingress requests
// the certificate of host: of the components whose ingress serves it with
// TLS, the first by name. The app's other Ingresses of that host use its
// Secret, so a host has one certificate.
func HostCertificateOwner(a *LoadedApp, host string, plat *Platform) string {
	owner := ""
	for i := range a.Spec.Components {
		c := &a.Spec.Components[i]
		if !ingressEnabled(c) || (owner != "" && c.Name >= owner) {
			continue
		}
		if tls := c.WorkloadSpec.Ingress.TLS; tls != nil && !*tls {
			continue
		}
		if IngressHost(a, c, plat) == host {
			owner = c.Name
		}
	}
	return owner
}

func ingressEnabled(c *Component) bool {
	return c.Type == TypeWorkload && c.WorkloadSpec != nil && c.WorkloadSpec.Ingress != nil && c.WorkloadSpec.Ingress.Enabled
}

// checkRoutes checks the ingresses' routes of an app: each goes to a
// workload of the app that exposes the port, and no host and path is
// routed twice, within one ingress or across the app's ingresses of one
// host.
func checkRoutes(a *LoadedApp, plat *Platform, ps *Problems) {
	s, doc := &a.Spec, a.Doc
	type routed struct {
		component string
		at        Path
	}
	n, routes := 0, false
	for i := range s.Components {
		if c := &s.Components[i]; ingressEnabled(c) {
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
		if !ingressEnabled(c) {
			continue
		}
		ing := c.WorkloadSpec.Ingress
		at := Path{"components", i, "workload_spec", "ingress"}
		if len(ing.Routes) > 0 && ing.Path != "" {
			ps.AddKey(doc, at.Child("path"), "set path or routes, not both: routes list every path of the host (add {path: %s} to them)", ing.Path)
		}
		host := IngressHost(a, c, plat)
		for j, r := range IngressRoutes(c) {
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
func checkRoute(a *LoadedApp, c *Component, r Route, at Path, ps *Problems) {
	doc := a.Doc
	if r.Path != "" && !strings.HasPrefix(r.Path, "/") {
		ps.Add(doc, at.Child("path"), "must start with /")
	}
	t := a.Component(r.Component)
	if t == nil {
		names := map[string]int{}
		for i, cc := range a.Spec.Components {
			names[cc.Name] = i
		}
		ps.Add(doc, at.Child("component"), "%s", unknownComponent(r.Component, a.Spec.Name, names))
		return
	}
	if t.Type != TypeWorkload || t.WorkloadSpec == nil {
		ps.Add(doc, at.Child("component"), "component %s is a %s; a route goes to a workload's Service", t.Name, t.Type)
		return
	}
	names := IngressPortNames(t.WorkloadSpec)
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
		if sug := suggest(r.Port, names); sug != "" {
			msg += fmt.Sprintf("; did you mean %q?", sug)
		}
		ps.Add(doc, field, "%s", msg)
	}
}
