package load

import "github.com/fleetwright/fleetwright/internal/spec"

// IngressHost is the host of a workload's ingress: its own, or
// <app>-<project>.<apps_domain> for one workload of the app and
// <component>-<app>-<project>.<apps_domain> for the others, so hosts stay
// unique. Which workload gets the app's own address depends on names only,
// never on the order of the components: of the workloads whose ingress
// takes the default host, the one named as the app, else the first by name.
func IngressHost(a *LoadedApp, c *spec.Component, plat *spec.Platform) string {
	if c.WorkloadSpec != nil && c.WorkloadSpec.Ingress != nil && c.WorkloadSpec.Ingress.Host != "" {
		return c.WorkloadSpec.Ingress.Host
	}
	first := ""
	for _, cc := range a.Spec.Components {
		w := cc.WorkloadSpec
		if w == nil || w.Ingress == nil || !w.Ingress.Enabled || w.Ingress.Host != "" {
			continue
		}
		if cc.Name == a.Spec.Name {
			first = cc.Name
			break
		}
		if first == "" || cc.Name < first {
			first = cc.Name
		}
	}
	if first == "" || first == c.Name {
		return a.Spec.Name + "-" + a.Project + "." + plat.AppsDomain
	}
	return c.Name + "-" + a.Spec.Name + "-" + a.Project + "." + plat.AppsDomain
}

// HostCertificateOwner is the component of an app whose Ingress requests
// the certificate of host: of the components whose ingress serves it with
// TLS, the first by name. The app's other Ingresses of that host use its
// Secret, so a host has one certificate.
func HostCertificateOwner(a *LoadedApp, host string, plat *spec.Platform) string {
	owner := ""
	for i := range a.Spec.Components {
		c := &a.Spec.Components[i]
		if !spec.IngressEnabled(c) || (owner != "" && c.Name >= owner) {
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
