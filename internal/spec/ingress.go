package spec

import "slices"

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

// IngressEnabled reports whether c is a workload with its ingress enabled.
func IngressEnabled(c *Component) bool {
	return c.Type == TypeWorkload && c.WorkloadSpec != nil && c.WorkloadSpec.Ingress != nil && c.WorkloadSpec.Ingress.Enabled
}
