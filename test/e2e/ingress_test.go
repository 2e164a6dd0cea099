package e2e

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/tlstest"
)

// ingress stands in for the cluster's ingress controller: a real TLS
// listener on 127.0.0.1 that the webhook's reachability probes are sent to
// (webhook -ingress-address).
//
// A real ingress controller (ingress-nginx, Traefik, …) runs in the
// cluster, watches Ingress objects, terminates TLS for each host with the
// certificate that cert-manager issued into the Secret named under the
// Ingress's spec.tls, and proxies each request by its Host to the ready
// endpoints of the backend Service; DNS points the apps' hosts at its load
// balancer. None of that can run here: kwok's pods run no containers and
// have no network, nothing issues certificates, and the hosts resolve
// nowhere. The stand-in keeps what the probes observe: it answers over TLS
// with a certificate for the host (from a CA the test gives the webhook
// with -tls-ca-bundle), routes by Host through the live Ingress objects
// (404 for a host no Ingress names, as a controller's default backend
// does) and answers 503 while the backend Service has no ready endpoint,
// 200 otherwise.
type ingress struct {
	// Addr is the listener's host:port.
	Addr string
	// CAPEM is the CA certificate that signed the listener's certificate.
	CAPEM []byte

	c client.Reader

	mu   sync.Mutex
	seen []string // "host status"
}

// startIngress serves hosts with a certificate signed by a new test CA.
func startIngress(t *testing.T, c client.Reader, hosts ...string) *ingress {
	t.Helper()
	ca := tlstest.NewCA(t, "fleetwright journey test CA")
	in := &ingress{c: c, CAPEM: ca.PEM()}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(in.serve))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{ca.Server(t, hosts...)}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	in.Addr = srv.Listener.Addr().String()
	return in
}

func (in *ingress) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	code, msg := in.route(r, host)
	in.mu.Lock()
	in.seen = append(in.seen, fmt.Sprintf("%s %d", host, code))
	in.mu.Unlock()
	http.Error(w, msg, code)
}

// route finds the Service behind host in the live Ingress objects and
// answers as a proxy to it would.
func (in *ingress) route(r *http.Request, host string) (int, string) {
	var ings networkingv1.IngressList
	if err := in.c.List(r.Context(), &ings); err != nil {
		return http.StatusBadGateway, err.Error()
	}
	for _, ing := range ings.Items {
		for _, rule := range ing.Spec.Rules {
			if rule.Host != host || rule.HTTP == nil || len(rule.HTTP.Paths) == 0 || rule.HTTP.Paths[0].Backend.Service == nil {
				continue
			}
			svc := rule.HTTP.Paths[0].Backend.Service.Name
			var eps discoveryv1.EndpointSliceList
			if err := in.c.List(r.Context(), &eps, client.InNamespace(ing.Namespace),
				client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
				return http.StatusBadGateway, err.Error()
			}
			for _, s := range eps.Items {
				for _, ep := range s.Endpoints {
					if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
						return http.StatusOK, "served by " + ing.Namespace + "/" + svc
					}
				}
			}
			return http.StatusServiceUnavailable, "no ready endpoint of " + ing.Namespace + "/" + svc
		}
	}
	return http.StatusNotFound, "no Ingress for " + host
}

// Seen returns the requests served so far, as "host status".
func (in *ingress) Seen() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.seen)
}
