package generate_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// sockShop is what microservices-demo's deploy/kubernetes/complete-demo.yaml
// says of each Deployment and its Service, written down field by field.
// Read at commit b1aaa7d3c064dc5192d54937444c43c40f7f7ae5 of
// microservices-demo/microservices-demo. Each value is in the form
// sockShopFields gives the rendered objects.
var sockShop = map[string]map[string]string{
	"carts": {
		"image": "weaveworksdemos/carts:0.4.8", "ports": "80", "service": "ClusterIP 80→80", "service annotations": "prometheus.io/scrape=true",
		"env": "JAVA_OPTS=" + javaOpts, "requests": "100m 200Mi", "limits": "300m 500Mi",
		"run as": "non-root 10001", "capabilities": "add NET_BIND_SERVICE, drop ALL", "read-only root": "true", "/tmp": "emptyDir Memory",
	},
	"carts-db": {
		"image": "mongo", "ports": "27017", "service": "ClusterIP 27017→27017",
		"capabilities": "add CHOWN SETGID SETUID, drop ALL", "read-only root": "true", "/tmp": "emptyDir Memory",
	},
	"catalogue": {
		"image": "weaveworksdemos/catalogue:0.3.5", "command": "/app -port=80", "ports": "80", "service": "ClusterIP 80→80", "service annotations": "prometheus.io/scrape=true",
		"requests": "100m 100Mi", "limits": "200m 200Mi", "probes": "http 80 /health  180/3; http 80 /health  300/3",
		"run as": "non-root 10001", "capabilities": "add NET_BIND_SERVICE, drop ALL", "read-only root": "true",
	},
	"catalogue-db": {
		"image": "weaveworksdemos/catalogue-db:0.3.0", "ports": "3306", "service": "ClusterIP 3306→3306",
		"env": "MYSQL_DATABASE=socksdb MYSQL_ROOT_PASSWORD=fake_password",
	},
	"front-end": {
		"image": "weaveworksdemos/front-end:0.3.12", "ports": "8079", "service": "NodePort 80→8079 node 30001", "service annotations": "prometheus.io/scrape=true",
		"env": "SESSION_REDIS=true", "requests": "100m 300Mi", "limits": "300m 1000Mi", "probes": "http 8079 /  30/3; http 8079 /  300/3",
		"run as": "non-root 10001", "capabilities": "drop ALL", "read-only root": "true",
	},
	"orders": {
		"image": "weaveworksdemos/orders:0.4.7", "ports": "80", "service": "ClusterIP 80→80", "service annotations": "prometheus.io/scrape=true",
		"env": "JAVA_OPTS=" + javaOpts, "requests": "100m 300Mi", "limits": "500m 500Mi",
		"run as": "non-root 10001", "capabilities": "add NET_BIND_SERVICE, drop ALL", "read-only root": "true", "/tmp": "emptyDir Memory",
	},
	"orders-db": {
		"image": "mongo", "ports": "27017", "service": "ClusterIP 27017→27017",
		"capabilities": "add CHOWN SETGID SETUID, drop ALL", "read-only root": "true", "/tmp": "emptyDir Memory",
	},
	"payment": {
		"image": "weaveworksdemos/payment:0.4.3", "ports": "80", "service": "ClusterIP 80→80", "service annotations": "prometheus.io/scrape=true",
		"requests": "99m 100Mi", "limits": "200m 200Mi", "probes": "http 80 /health  180/3; http 80 /health  300/3",
		"run as": "non-root 10001", "capabilities": "add NET_BIND_SERVICE, drop ALL", "read-only root": "true",
	},
	"queue-master": {
		"image": "weaveworksdemos/queue-master:0.3.1", "ports": "80", "service": "ClusterIP 80→80", "service annotations": "prometheus.io/scrape=true",
		"env": "JAVA_OPTS=" + javaOpts, "requests": "100m 300Mi", "limits": "300m 500Mi",
	},
	"rabbitmq": {
		"image": "rabbitmq:3.6.8-management", "ports": "15672 5672", "service": "ClusterIP 5672→5672 9090→9090",
		"service annotations": "prometheus.io/port=9090 prometheus.io/scrape=true", "pod annotations": "prometheus.io/scrape=false",
		"capabilities": "add CHOWN SETGID SETUID DAC_OVERRIDE, drop ALL", "read-only root": "true",
		"other containers": "kbudde/rabbitmq-exporter 9090",
	},
	"session-db": {
		"image": "redis:alpine", "ports": "6379", "service": "ClusterIP 6379→6379", "pod annotations": "prometheus.io.scrape=false",
		"capabilities": "add CHOWN SETGID SETUID, drop ALL", "read-only root": "true",
	},
	"shipping": {
		"image": "weaveworksdemos/shipping:0.4.8", "ports": "80", "service": "ClusterIP 80→80", "service annotations": "prometheus.io/scrape=true",
		"env": "JAVA_OPTS=" + javaOpts + " ZIPKIN=zipkin.jaeger.svc.cluster.local", "requests": "100m 300Mi", "limits": "300m 500Mi",
		"run as": "non-root 10001", "capabilities": "add NET_BIND_SERVICE, drop ALL", "read-only root": "true", "/tmp": "emptyDir Memory",
	},
	"user": {
		"image": "weaveworksdemos/user:0.4.7", "ports": "80", "service": "ClusterIP 80→80", "service annotations": "prometheus.io/scrape=true",
		"env": "mongo=user-db:27017", "requests": "100m 100Mi", "limits": "300m 200Mi", "probes": "http 80 /health  180/3; http 80 /health  300/3",
		"run as": "non-root 10001", "capabilities": "add NET_BIND_SERVICE, drop ALL", "read-only root": "true",
	},
	"user-db": {
		"image": "weaveworksdemos/user-db:0.3.0", "ports": "27017", "service": "ClusterIP 27017→27017",
		"capabilities": "add CHOWN SETGID SETUID, drop ALL", "read-only root": "true", "/tmp": "emptyDir Memory",
	},
}

const javaOpts = "-Xms64m -Xmx128m -XX:+UseG1GC -Djava.security.egd=file:/dev/urandom -Dspring.zipkin.enabled=false"

// sockShopAll are the fields every upstream Deployment has alike.
var sockShopAll = map[string]string{"replicas": "1", "node selector": "beta.kubernetes.io/os=linux"}

// sockShopDiffers is every field that differs from upstream, and why
// (docs/spec.md, "Expressing an existing app", says the same).
var sockShopDiffers = map[string]string{
	"carts-db image":            "mongo:4.4: an image without a tag is refused (forbid_latest); 4.4 is a version the services' drivers speak",
	"orders-db image":           "as carts-db",
	"rabbitmq other containers": "the exporter's tag is pinned (v0.29.0), for forbid_latest; it runs as a native sidecar",
	"catalogue-db env":          "MYSQL_ROOT_PASSWORD comes from the Secret catalogue-db: a password is never written in a spec",
	"catalogue-db capabilities": "upstream leaves the runtime's default capabilities; the platform drops ALL, so the spec adds back what MySQL's entrypoint uses",
	"queue-master capabilities": "upstream sets no securityContext; the platform drops ALL, which the service does not need",
	// Probes: production's require_probes, each on the port the service
	// serves; the Java services answer /health as catalogue does.
	"carts probes": "added", "carts-db probes": "added", "catalogue-db probes": "added", "orders probes": "added",
	"orders-db probes": "added", "queue-master probes": "added", "rabbitmq probes": "added", "session-db probes": "added",
	"shipping probes": "added", "user-db probes": "added",
	// Requests: require_requests; the project's default requests.
	"carts-db requests": "default", "catalogue-db requests": "default", "orders-db requests": "default",
	"rabbitmq requests": "default", "session-db requests": "default", "user-db requests": "default",
	// Two replicas of each stateless service: production_replicas. The
	// stores keep one (two would be two stores).
	"carts replicas": "2", "catalogue replicas": "2", "front-end replicas": "2", "orders replicas": "2",
	"payment replicas": "2", "queue-master replicas": "2", "shipping replicas": "2", "user replicas": "2",
}

// TestSockShopMatchesUpstream renders examples/real-apps' Sock Shop and
// compares each Deployment and its Service with the upstream manifests,
// field by field: the fields that differ are exactly those
// sockShopDiffers lists, with why.
func TestSockShopMatchesUpstream(t *testing.T) {
	t.Parallel()
	got := render(t, loadRepo(t, nil, "../../examples/real-apps"), nil)
	const dir = "apps/prod-eu/sock-shop/socks/"
	compared, differ := 0, map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(sockShop)) {
		var d appsv1.Deployment
		decode(t, got[dir+name+"/deployment-socks-"+name+".yaml"], &d)
		var svc corev1.Service
		decode(t, got[dir+name+"/service-"+name+".yaml"], &svc)
		rendered := sockShopFields(&d, &svc)
		want := maps.Clone(sockShopAll)
		maps.Copy(want, sockShop[name])
		for _, field := range slices.Sorted(maps.Keys(rendered)) {
			compared++
			if rendered[field] != want[field] {
				differ[name+" "+field] = fmt.Sprintf("%q, upstream %q", rendered[field], want[field])
			}
		}
	}
	checkDiffers(t, differ, sockShopDiffers, "upstream")
	if compared != 14*17 {
		t.Errorf("compared %d fields, want %d", compared, 14*17)
	}
	t.Logf("Sock Shop: %d of %d fields as upstream", compared-len(differ), compared)
}

// sockShopFields says what a rendered Deployment and its Service hold, in
// the words of the sockShop table.
func sockShopFields(d *appsv1.Deployment, svc *corev1.Service) map[string]string {
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	out := map[string]string{"image": c.Image, "replicas": strconv.Itoa(int(deref(d.Spec.Replicas)))}
	out["command"] = strings.Join(append(slices.Clone(c.Command), c.Args...), " ")
	ports := map[string]int32{}
	var cp []string
	for _, p := range c.Ports {
		cp = append(cp, strconv.Itoa(int(p.ContainerPort)))
		ports[p.Name] = p.ContainerPort
	}
	out["ports"] = strings.Join(cp, " ")
	var others []string
	for _, x := range pod.InitContainers {
		if x.RestartPolicy != nil && *x.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			s := x.Image
			for _, p := range x.Ports {
				ports[p.Name] = p.ContainerPort
				s += " " + strconv.Itoa(int(p.ContainerPort))
			}
			others = append(others, s)
		}
	}
	out["other containers"] = strings.Join(others, ", ")
	s := string(svc.Spec.Type)
	for _, p := range svc.Spec.Ports {
		target := p.TargetPort.IntVal
		if p.TargetPort.StrVal != "" {
			target = ports[p.TargetPort.StrVal]
		}
		s += fmt.Sprintf(" %d→%d", p.Port, target)
		if p.NodePort != 0 {
			s += fmt.Sprintf(" node %d", p.NodePort)
		}
	}
	out["service"] = s
	kv := func(m map[string]string) string {
		var l []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !strings.HasPrefix(k, "fleetwright.") {
				l = append(l, k+"="+m[k])
			}
		}
		return strings.Join(l, " ")
	}
	out["service annotations"] = kv(svc.Annotations)
	out["pod annotations"] = kv(d.Spec.Template.Annotations)
	out["node selector"] = kv(pod.NodeSelector)
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "secret " + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		default:
			env[e.Name] = strings.Replace(e.Value, ".sock-shop.svc.cluster.local:", ":", 1)
		}
	}
	out["env"] = kv(env)
	out["requests"], out["limits"] = cpuMemory(c.Resources.Requests), cpuMemory(c.Resources.Limits)
	out["probes"] = probeText(c.ReadinessProbe) + "; " + probeText(c.LivenessProbe)
	if out["probes"] == "none; none" {
		out["probes"] = ""
	}
	// Whom the container runs as: its own settings over the pod's; a
	// runAsNonRoot that is false asks as little as none.
	nonRoot, user := pod.SecurityContext.RunAsNonRoot, pod.SecurityContext.RunAsUser
	var caps *corev1.Capabilities
	readOnly := false
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if sc.RunAsUser != nil {
			user = sc.RunAsUser
		}
		caps, readOnly = sc.Capabilities, deref(sc.ReadOnlyRootFilesystem)
	}
	switch {
	case deref(nonRoot) && user != nil:
		out["run as"] = fmt.Sprintf("non-root %d", *user)
	case deref(nonRoot):
		out["run as"] = "non-root"
	case user != nil:
		out["run as"] = strconv.FormatInt(*user, 10)
	default:
		out["run as"] = ""
	}
	var cs []string
	if caps != nil && len(caps.Add) > 0 {
		cs = append(cs, "add "+capList(caps.Add))
	}
	if caps != nil && len(caps.Drop) > 0 {
		cs = append(cs, "drop "+capList(caps.Drop))
	}
	out["capabilities"] = strings.Join(cs, ", ")
	out["read-only root"] = ""
	if readOnly {
		out["read-only root"] = "true"
	}
	out["/tmp"] = ""
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if m.MountPath == "/tmp" && v.Name == m.Name && v.EmptyDir != nil {
				out["/tmp"] = "emptyDir " + string(v.EmptyDir.Medium)
			}
		}
	}
	return out
}

// capList writes capabilities as upstream's do, in capitals (upstream
// writes drop: [all]; Kubernetes reads either).
func capList(cs []corev1.Capability) string {
	var l []string
	for _, c := range cs {
		l = append(l, strings.ToUpper(string(c)))
	}
	return strings.Join(l, " ")
}

func quantity(q resource.Quantity) string { return q.String() }

// cpuMemory is a resource list's CPU and memory, in that order, as the
// upstream tables write them ("100m 200Mi").
func cpuMemory(l corev1.ResourceList) string {
	var q []string
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if v, ok := l[n]; ok {
			q = append(q, quantity(v))
		}
	}
	return strings.Join(q, " ")
}

// checkDiffers checks the fields that differ from an upstream app (field:
// "rendered, upstream") against the list of those known to differ, with
// why: a difference the list lacks fails, and so does a listed one that
// no longer differs.
func checkDiffers(t *testing.T, differ, listed map[string]string, upstream string) {
	t.Helper()
	var unexplained, gone []string
	for k, v := range differ {
		if _, ok := listed[k]; !ok {
			unexplained = append(unexplained, k+": "+v)
		}
	}
	for k := range listed {
		if _, ok := differ[k]; !ok {
			gone = append(gone, k)
		}
	}
	slices.Sort(unexplained)
	slices.Sort(gone)
	if len(unexplained) > 0 {
		t.Errorf("fields that differ from %s, unexplained:\n%s", upstream, strings.Join(unexplained, "\n"))
	}
	if len(gone) > 0 {
		t.Errorf("the list of differences names fields that now match %s: %v", upstream, gone)
	}
}
