package validate

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

var httpHeaderName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// checkProbes checks the probes of one container whose ports are ports.
func checkProbes(doc *load.Document, pr *spec.Probes, ports []containerPort, at load.Path, initContainer bool, ps *load.Problems) {
	if pr == nil {
		return
	}
	if initContainer {
		ps.AddKey(doc, at, "an init container runs to completion before the others start and takes no probes; probe a sidecar or the main container")
		return
	}
	for _, k := range []struct {
		name string
		p    *spec.Probe
	}{{"readiness", pr.Readiness}, {"liveness", pr.Liveness}, {"startup", pr.Startup}} {
		p := k.p
		if p == nil {
			continue
		}
		pa := at.Child(k.name)
		n := countSet(p.HTTP != nil, p.GRPC != nil, p.TCP != nil, p.Exec != nil)
		switch {
		case n == 0:
			ps.Add(doc, pa, "a %s probe needs one of http, grpc, tcp or exec", k.name)
		case n > 1:
			ps.Add(doc, pa, "a %s probe takes one of http, grpc, tcp or exec, not %d", k.name, n)
		}
		if p.SuccessThreshold != nil && *p.SuccessThreshold != 1 && k.name != "readiness" {
			ps.Add(doc, pa.Child("success_threshold"), "must be 1 for a %s probe (Kubernetes allows more only for readiness)", k.name)
		}
		probePort := func(port int, where load.Path) {
			if port == 0 {
				return
			}
			i := slices.IndexFunc(ports, func(cp containerPort) bool { return cp.port == port && cp.protocol != spec.ProtocolUDP })
			switch {
			case i >= 0:
			case slices.ContainsFunc(ports, func(cp containerPort) bool { return cp.port == port }):
				ps.Add(doc, where, "port %d is a UDP port; probes connect over TCP", port)
			default:
				ps.Add(doc, where, "%s", undeclaredPort(port, ports, "the container"))
			}
		}
		if h := p.HTTP; h != nil {
			hp := pa.Child("http")
			if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
				ps.Add(doc, hp.Child("path"), "must start with /")
			}
			if h.Port == 0 && !doc.Has(hp.Child("port")) && !slices.ContainsFunc(ports, func(cp containerPort) bool { return cp.exposed && cp.protocol == spec.ProtocolTCP }) {
				ps.Add(doc, hp, "an http probe needs a port: set http.port, or declare an exposed TCP port")
			}
			probePort(h.Port, hp.Child("port"))
			for _, name := range sortedKeys(h.Headers) {
				if !httpHeaderName.MatchString(name) {
					ps.AddKey(doc, hp.Child("headers").Child(name), "%q is not a valid HTTP header name", name)
				} else if strings.EqualFold(name, "Host") {
					ps.AddKey(doc, hp.Child("headers").Child(name), "the kubelet sets Host from the pod; leave it out")
				}
			}
		}
		if g := p.GRPC; g != nil {
			probePort(g.Port, pa.Child("grpc").Child("port"))
		}
		if t := p.TCP; t != nil {
			probePort(t.Port, pa.Child("tcp").Child("port"))
		}
	}
}
