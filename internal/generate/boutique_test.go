package generate_test

import (
	cmpstd "cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// upstream is what GoogleCloudPlatform/microservices-demo's
// kubernetes-manifests/ say of one service, written down by hand: ports,
// Service ports, probes, security contexts, resources, env, volumes. Read
// at commit 34ffea9175946982c3088ed84994fe6019ad6e92 (2026-08-11) from
// kubernetes-manifests/<service>.yaml; redis-cart is in cartservice.yaml.
type upstream struct {
	port        int32  // container port
	servicePort int32  // the Service's port (targetPort is the container port)
	portName    string // the Service port's name ("grpc" unless set)
	serviceType string // "" = ClusterIP
	annotations string // pod template annotations, "key=value"
	probe       string // readiness; liveness, as "kind port delay/period" (0 = Kubernetes' default)
	requests    [2]string
	limits      [2]string
	env         map[string]string // addresses as <service>:<port>
	grace       int64             // terminationGracePeriodSeconds, 0 = default
	account     bool              // runs as its own ServiceAccount
	volumes     string            // mount path → volume kind
	initImage   string            // an init container's image name
}

var boutique = map[string]upstream{
	"redis-cart": {port: 6379, servicePort: 6379, portName: "tcp-redis", probe: "tcp 6379 0/5; tcp 6379 0/5",
		requests: [2]string{"70m", "200Mi"}, limits: [2]string{"125m", "256Mi"}, volumes: "/data emptyDir"},
	"adservice": {port: 9555, servicePort: 9555, probe: "grpc 9555 20/15; grpc 9555 20/15",
		requests: [2]string{"200m", "180Mi"}, limits: [2]string{"300m", "300Mi"}, env: map[string]string{"PORT": "9555"}, grace: 5, account: true},
	"cartservice": {port: 7070, servicePort: 7070, probe: "grpc 7070 15/0; grpc 7070 15/10",
		requests: [2]string{"200m", "64Mi"}, limits: [2]string{"300m", "128Mi"}, env: map[string]string{"REDIS_ADDR": "redis-cart:6379"}, grace: 5, account: true},
	"checkoutservice": {port: 5050, servicePort: 5050, probe: "grpc 5050 0/0; grpc 5050 0/0",
		requests: [2]string{"100m", "64Mi"}, limits: [2]string{"200m", "128Mi"}, account: true, env: map[string]string{
			"PORT": "5050", "PRODUCT_CATALOG_SERVICE_ADDR": "productcatalogservice:3550", "SHIPPING_SERVICE_ADDR": "shippingservice:50051",
			"PAYMENT_SERVICE_ADDR": "paymentservice:50051", "EMAIL_SERVICE_ADDR": "emailservice:5000", "CURRENCY_SERVICE_ADDR": "currencyservice:7000",
			"CART_SERVICE_ADDR": "cartservice:7070"}},
	"currencyservice": {port: 7000, servicePort: 7000, probe: "grpc 7000 0/0; grpc 7000 0/0",
		requests: [2]string{"100m", "64Mi"}, limits: [2]string{"200m", "128Mi"}, env: map[string]string{"PORT": "7000", "DISABLE_PROFILER": "1"}, grace: 5, account: true},
	"emailservice": {port: 8080, servicePort: 5000, probe: "grpc 8080 0/5; grpc 8080 0/5",
		requests: [2]string{"100m", "64Mi"}, limits: [2]string{"200m", "128Mi"}, env: map[string]string{"PORT": "8080", "DISABLE_PROFILER": "1"}, grace: 5, account: true},
	"paymentservice": {port: 50051, servicePort: 50051, probe: "grpc 50051 0/0; grpc 50051 0/0",
		requests: [2]string{"100m", "64Mi"}, limits: [2]string{"200m", "128Mi"}, env: map[string]string{"PORT": "50051", "DISABLE_PROFILER": "1"}, grace: 5, account: true},
	"productcatalogservice": {port: 3550, servicePort: 3550, probe: "grpc 3550 0/0; grpc 3550 0/0",
		requests: [2]string{"100m", "64Mi"}, limits: [2]string{"200m", "128Mi"}, env: map[string]string{"PORT": "3550", "DISABLE_PROFILER": "1"}, grace: 5, account: true},
	"recommendationservice": {port: 8080, servicePort: 8080, probe: "grpc 8080 0/5; grpc 8080 0/5",
		requests: [2]string{"100m", "220Mi"}, limits: [2]string{"200m", "450Mi"}, grace: 5, account: true, env: map[string]string{
			"PORT": "8080", "PRODUCT_CATALOG_SERVICE_ADDR": "productcatalogservice:3550", "DISABLE_PROFILER": "1"}},
	"shippingservice": {port: 50051, servicePort: 50051, probe: "grpc 50051 0/5; grpc 50051 0/0",
		requests: [2]string{"100m", "64Mi"}, limits: [2]string{"200m", "128Mi"}, env: map[string]string{"PORT": "50051", "DISABLE_PROFILER": "1"}, account: true},
	"frontend": {port: 8080, servicePort: 80, portName: "http", serviceType: "LoadBalancer", annotations: "sidecar.istio.io/rewriteAppHTTPProbers=true",
		probe:    "http 8080 /_healthz Cookie=shop_session-id=x-readiness-probe 10/0; http 8080 /_healthz Cookie=shop_session-id=x-liveness-probe 10/0",
		requests: [2]string{"100m", "64Mi"}, limits: [2]string{"200m", "128Mi"}, account: true, env: map[string]string{
			"PORT": "8080", "PRODUCT_CATALOG_SERVICE_ADDR": "productcatalogservice:3550", "CURRENCY_SERVICE_ADDR": "currencyservice:7000",
			"CART_SERVICE_ADDR": "cartservice:7070", "RECOMMENDATION_SERVICE_ADDR": "recommendationservice:8080", "SHIPPING_SERVICE_ADDR": "shippingservice:50051",
			"CHECKOUT_SERVICE_ADDR": "checkoutservice:5050", "AD_SERVICE_ADDR": "adservice:9555", "SHOPPING_ASSISTANT_SERVICE_ADDR": "shoppingassistantservice:80",
			"ENABLE_PROFILER": "0"}},
	"loadgenerator": {probe: "none; none", annotations: "sidecar.istio.io/rewriteAppHTTPProbers=true", requests: [2]string{"300m", "256Mi"}, limits: [2]string{"500m", "512Mi"}, grace: 5, account: true,
		env: map[string]string{"FRONTEND_ADDR": "frontend:80", "USERS": "10", "RATE": "1"}, initImage: "busybox"},
}

// TestBoutiqueMatchesUpstream renders examples/real-apps' Online Boutique
// and compares each service with the upstream manifests, in meaning.
//
// What differs, and why:
//   - Object names: Deployments are shop-<service> (fleetwright's
//     <app>-<component>); the Services keep the upstream names, so the
//     addresses are the same. Containers are named after the component,
//     not "server".
//   - Addresses are the Service's full DNS name (productcatalogservice.
//     boutique.svc.cluster.local:3550), from the address export: the same
//     Service as the short name.
//   - frontend-external (a LoadBalancer) and frontend (ClusterIP) are one
//     LoadBalancer Service named frontend, which serves in-cluster callers
//     at frontend:80 too: a component has one Service.
//   - Containers also get seccompProfile RuntimeDefault (the platform's
//     restricted defaults); upstream's privileged: false is Kubernetes'
//     default and is not written.
//   - Pods that name no account are not given an API token
//     (redis-cart: automountServiceAccountToken false).
//   - The loadgenerator's init container gets the platform's default
//     resources and runs a script of our own that does the same check.
//   - redis-cart is a workload with an empty_dir volume, as upstream, not
//     the redis addon: the addon's chart names its own Service and brings
//     persistence the cart does not use.
//   - The loadgenerator is kept as a workload without ports (upstream has
//     no Service for it either), so the shop generates load as upstream.
//   - The services run two replicas (upstream: one), as the production
//     cluster's policy asks; redis-cart and the loadgenerator keep one.
//     Replicas are not compared here.
//   - Flux applies the services in the order of their address exports
//     (backends before the frontend, the frontend before the
//     loadgenerator); upstream applies all at once.
func TestBoutiqueMatchesUpstream(t *testing.T) {
	t.Parallel()
	got := render(t, loadRepo(t, nil, "../../examples/real-apps"), nil)
	const dir = "apps/prod-eu/boutique/shop/"
	seen := 0
	for p := range got {
		if strings.HasPrefix(p, dir) && strings.Contains(p, "/deployment-") {
			seen++
		}
	}
	if seen != len(boutique) {
		t.Errorf("%d Deployments rendered, the table has %d services", seen, len(boutique))
	}
	for name, want := range boutique {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var d appsv1.Deployment
			decode(t, got[dir+name+"/deployment-shop-"+name+".yaml"], &d)
			pod := d.Spec.Template.Spec
			c := pod.Containers[0]
			if want.port != 0 {
				if len(c.Ports) != 1 || c.Ports[0].ContainerPort != want.port || c.Ports[0].Protocol != corev1.ProtocolTCP {
					t.Errorf("container ports %+v, want %d/TCP", c.Ports, want.port)
				}
				var svc corev1.Service
				decode(t, got[dir+name+"/service-"+name+".yaml"], &svc)
				portName := cmpstd.Or(want.portName, "grpc")
				if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != want.servicePort || svc.Spec.Ports[0].Name != portName ||
					svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.Ports[0].TargetPort.String() != c.Ports[0].Name {
					t.Errorf("service ports %+v, want %s %d/TCP → the container's %d", svc.Spec.Ports, portName, want.servicePort, want.port)
				}
				if typ := cmpstd.Or(want.serviceType, "ClusterIP"); string(svc.Spec.Type) != typ {
					t.Errorf("service type %q, want %q", svc.Spec.Type, typ)
				}
				if d.Spec.Template.Labels == nil || !mapsSubset(svc.Spec.Selector, d.Spec.Template.Labels) {
					t.Errorf("the Service %v does not select the pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
				}
			} else if len(c.Ports) != 0 {
				t.Errorf("ports %+v, want none", c.Ports)
			}
			if p := probeText(c.ReadinessProbe) + "; " + probeText(c.LivenessProbe); p != want.probe {
				t.Errorf("probes %q, want %q", p, want.probe)
			}
			// Every upstream service runs as 1000:1000 with fsGroup 1000,
			// non-root, no privilege escalation, no capabilities, a
			// read-only root filesystem.
			ps := pod.SecurityContext
			if ps == nil || deref(ps.RunAsUser) != 1000 || deref(ps.RunAsGroup) != 1000 || deref(ps.FSGroup) != 1000 || !deref(ps.RunAsNonRoot) {
				t.Errorf("pod security %+v", ps)
			}
			for _, ctr := range append(slices.Clone(pod.InitContainers), c) {
				cs := ctr.SecurityContext
				if cs == nil || cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation || !deref(cs.ReadOnlyRootFilesystem) || deref(cs.Privileged) ||
					cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(cs.Capabilities.Add) != 0 || cs.RunAsUser != nil {
					t.Errorf("container %s security %+v", ctr.Name, cs)
				}
			}
			var ann []string
			for k, v := range d.Spec.Template.Annotations {
				if !strings.HasPrefix(k, "fleetwright.") {
					ann = append(ann, k+"="+v)
				}
			}
			if a := strings.Join(slices.Sorted(slices.Values(ann)), ","); a != want.annotations {
				t.Errorf("pod annotations %q, want %q", a, want.annotations)
			}
			res := fmt.Sprintf("%s %s / %s %s", c.Resources.Requests.Cpu(), c.Resources.Requests.Memory(), c.Resources.Limits.Cpu(), c.Resources.Limits.Memory())
			if w := fmt.Sprintf("%s %s / %s %s", want.requests[0], want.requests[1], want.limits[0], want.limits[1]); res != w {
				t.Errorf("resources %s, want %s", res, w)
			}
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = strings.Replace(e.Value, ".boutique.svc.cluster.local:", ":", 1)
			}
			if diff := cmp.Diff(want.env, env); diff != "" && !(len(want.env) == 0 && len(env) == 0) {
				t.Errorf("env (-upstream +rendered):\n%s", diff)
			}
			var vols []string
			for _, m := range c.VolumeMounts {
				for _, v := range pod.Volumes {
					if v.Name == m.Name && v.EmptyDir != nil {
						vols = append(vols, m.MountPath+" emptyDir")
					}
				}
			}
			if strings.Join(vols, ",") != want.volumes {
				t.Errorf("volumes %q, want %q", vols, want.volumes)
			}
			grace := int64(0)
			if pod.TerminationGracePeriodSeconds != nil {
				grace = *pod.TerminationGracePeriodSeconds
			}
			if grace != want.grace {
				t.Errorf("terminationGracePeriodSeconds %d, want %d", grace, want.grace)
			}
			if (pod.ServiceAccountName == name) != want.account {
				t.Errorf("service account %q", pod.ServiceAccountName)
			}
			if want.account {
				if _, ok := got[dir+name+"/serviceaccount-"+name+".yaml"]; !ok {
					t.Errorf("no ServiceAccount %s among %v", name, slices.Sorted(maps.Keys(got))[:3])
				}
			}
			if want.initImage != "" && (len(pod.InitContainers) != 1 || !strings.HasPrefix(pod.InitContainers[0].Image, want.initImage+":") || pod.InitContainers[0].Env[0].Value != "frontend.boutique.svc.cluster.local:80") {
				t.Errorf("init containers %+v", pod.InitContainers)
			}
		})
	}
}

func decode(t *testing.T, data []byte, into any) {
	t.Helper()
	if data == nil {
		t.Fatal("not rendered")
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatal(err)
	}
}

func probeText(p *corev1.Probe) string {
	if p == nil {
		return "none"
	}
	timing := fmt.Sprintf("%d/%d", p.InitialDelaySeconds, p.PeriodSeconds)
	switch {
	case p.GRPC != nil:
		return fmt.Sprintf("grpc %d %s", p.GRPC.Port, timing)
	case p.TCPSocket != nil:
		return fmt.Sprintf("tcp %s %s", p.TCPSocket.Port.String(), timing)
	case p.HTTPGet != nil:
		var hs []string
		for _, h := range p.HTTPGet.HTTPHeaders {
			hs = append(hs, h.Name+"="+h.Value)
		}
		return fmt.Sprintf("http %s %s %s %s", p.HTTPGet.Port.String(), p.HTTPGet.Path, strings.Join(hs, ","), timing)
	}
	return "other"
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func mapsSubset(sub, m map[string]string) bool {
	for k, v := range sub {
		if m[k] != v {
			return false
		}
	}
	return true
}
