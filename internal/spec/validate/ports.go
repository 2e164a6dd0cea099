package validate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// containerPort is a port of a container as the checks see it.
type containerPort struct {
	name        string
	port        int
	protocol    string
	exposed     bool
	servicePort int
	container   load.Path // the container's path
	index       int       // in its ports; -1 for port
}

// at is the port's path: built only for a problem.
func (p containerPort) at() load.Path {
	if p.index < 0 {
		return p.container.Child("port")
	}
	return p.container.Child("ports").Child(p.index)
}

// sameContainer reports whether two ports are of one container.
func (p containerPort) sameContainer(q containerPort) bool {
	return slices.Equal(p.container, q.container)
}

// portsOf returns the ports of a container: port (one TCP port named http)
// or ports.
func portsOf(port int, ports []spec.Port, at load.Path) []containerPort {
	if port > 0 {
		return []containerPort{{name: "http", port: port, protocol: spec.ProtocolTCP, exposed: true, servicePort: port, container: at, index: -1}}
	}
	if len(ports) == 0 {
		return nil
	}
	out := make([]containerPort, 0, len(ports))
	for i, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = spec.ProtocolTCP
		}
		sp := p.ServicePort
		if sp == 0 {
			sp = p.Port
		}
		out = append(out, containerPort{name: p.Name, port: p.Port, protocol: proto, exposed: p.Expose == nil || *p.Expose,
			servicePort: sp, container: at, index: i})
	}
	return out
}

// hasExposedTCP reports whether a workload's own container has an exposed
// TCP port, which an ingress can route to.
func hasExposedTCP(w *spec.WorkloadSpec) bool {
	if w.Port > 0 {
		return true
	}
	for _, p := range w.Ports {
		if (p.Expose == nil || *p.Expose) && (p.Protocol == "" || p.Protocol == spec.ProtocolTCP) {
			return true
		}
	}
	return false
}

// hasTCP reports whether the workload's container declares a TCP port,
// exposed or not.
func hasTCP(w *spec.WorkloadSpec) bool {
	return w.Port > 0 || slices.ContainsFunc(w.Ports, func(p spec.Port) bool { return p.Protocol == "" || p.Protocol == spec.ProtocolTCP })
}

// checkWorkloadPorts checks the ports of the workload's container, its
// probes' ports, and the Service made of every container's exposed ports.
func checkWorkloadPorts(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	if w.Port > 0 && len(w.Ports) > 0 {
		ps.AddKey(doc, at.Child("ports"), "set port or ports, not both: port is one TCP port named http, ports lists them all")
	}
	if w.HealthCheck != nil && w.Probes != nil {
		ps.AddKey(doc, at.Child("probes"), "set health_check or probes, not both: health_check is one HTTP check used for readiness and liveness")
	}
	main := portsOf(w.Port, w.Ports, at)
	if w.Port > 0 && len(w.Ports) > 0 {
		checkPorts(doc, portsOf(0, w.Ports, at), ps)
	} else {
		checkPorts(doc, main, ps)
	}
	if len(w.Ports) > 0 {
		if hc := w.HealthCheck; hc != nil && hc.Port > 0 && !slices.ContainsFunc(main, func(p containerPort) bool { return p.port == hc.Port }) {
			ps.Add(doc, at.Child("health_check").Child("port"), "%s", undeclaredPort(hc.Port, main, "the container"))
		}
	}
	if w.Probes != nil {
		checkProbes(doc, w.Probes, main, at.Child("probes"), false, ps)
	}

	// The pod's Service: the exposed ports of every container.
	exposed := main
	if len(w.Sidecars) > 0 || len(w.Ports) > 0 {
		exposed = nil
		for _, p := range main {
			if p.exposed {
				exposed = append(exposed, p)
			}
		}
		for i, s := range w.Sidecars {
			for _, p := range portsOf(0, s.Ports, at.Child("sidecars").Child(i)) {
				if p.exposed {
					exposed = append(exposed, p)
				}
			}
		}
		checkServicePorts(doc, exposed, ps)
	}
	if s := w.Service; s != nil && c.Type == spec.TypeWorkload {
		if s.Name != "" {
			if m := load.CheckLabel(s.Name, 63); m != "" {
				ps.Add(doc, at.Child("service").Child("name"), "%s", m)
			}
		}
		if len(exposed) == 0 && s.Type != spec.ServiceHeadless {
			ps.AddKey(doc, at.Child("service"), "a Service needs an exposed port: add port, or ports without expose: false (only a Headless one may have none)")
		}
	}

}

// checkPorts refuses ports of one container that share a name, or a
// number and protocol.
func checkPorts(doc *load.Document, ports []containerPort, ps *load.Problems) {
	if len(ports) < 2 && (len(ports) == 0 || ports[0].exposed) {
		return
	}
	for i, p := range ports {
		if !p.exposed && p.servicePort != p.port && doc.Has(p.at().Child("service_port")) {
			ps.AddKey(doc, p.at().Child("service_port"), "is unused: expose: false keeps the port off the Service")
		}
		for _, q := range ports[:i] {
			if p.name != "" && q.name == p.name {
				ps.Add(doc, p.at().Child("name"), "port name %q is used twice in this container (also %s)", p.name, shortPath(q.at()))
				break
			}
		}
		for _, q := range ports[:i] {
			if p.port > 0 && q.port == p.port && q.protocol == p.protocol {
				ps.Add(doc, p.at().Child("port"), "port %d/%s is declared twice in this container (also %s)", p.port, p.protocol, shortPath(q.at()))
				break
			}
		}
	}
}

// checkServicePorts refuses Service ports that share a name or a number and
// protocol, across the containers of the pod (checkPorts tells of those of
// one container).
func checkServicePorts(doc *load.Document, ports []containerPort, ps *load.Problems) {
	for i, p := range ports {
		for _, q := range ports[:i] {
			if p.name != "" && q.name == p.name && !p.sameContainer(q) {
				ps.Add(doc, p.at().Child("name"), "the Service has a port named %q already (%s); name the ports of the pod's containers apart, or set expose: false", p.name, shortPath(q.at()))
				break
			}
		}
		for _, q := range ports[:i] {
			if p.servicePort > 0 && q.servicePort == p.servicePort && q.protocol == p.protocol && !p.sameContainer(q) {
				at := p.at().Child("service_port")
				if !doc.Has(at) {
					at = p.at().Child("port")
				}
				ps.Add(doc, at, "the Service has port %d/%s already (%s); give one a different service_port, or set expose: false", p.servicePort, p.protocol, shortPath(q.at()))
				break
			}
		}
	}
}

// shortPath writes a path inside a workload_spec from there: what a
// message about another field of the same component names.
func shortPath(p load.Path) string {
	if len(p) > 3 && p[0] == "components" && p[2] == "workload_spec" {
		return p[3:].String()
	}
	return p.String()
}

func undeclaredPort(port int, ports []containerPort, who string) string {
	if len(ports) == 0 {
		return fmt.Sprintf("port %d is not declared: %s has no port; declare it in ports (expose: false keeps it off the Service)", port, who)
	}
	var list []string
	for _, p := range ports {
		list = append(list, strconv.Itoa(p.port))
	}
	return fmt.Sprintf("port %d is not a port %s declares (%s); declare it in ports (expose: false keeps it off the Service)", port, who, strings.Join(list, ", "))
}
