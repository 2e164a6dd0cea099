package generate_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// mastodonChart is what Mastodon's Helm chart (mastodon/chart) renders of
// each workload, written down field by field. Read at commit
// 3c8d76d0351f491f4a06cf76f1664d7b74fee375 (chart 6.9.3), at its default
// values but for what every operator sets: local_domain and the ingress
// host social.example.com, and image.tag v4.3.2, the example's release.
// The release is named mastodon, so the objects are mastodon-<part>. Each
// value is in the form mastodonFields gives the rendered objects; a probe
// is its check, then initial delay/period/failure threshold.
var mastodonChart = map[string]map[string]string{
	"mastodon-web": {
		"image": "ghcr.io/mastodon/mastodon:v4.3.2", "command": "bundle exec puma -C config/puma.rb", "ports": "3000",
		"readiness": "http 3000 /health 0/10/3", "liveness": "tcp 3000 0/10/3", "startup": "http 3000 /health 15/5/30",
		"replicas": "1", "strategy": "RollingUpdate 10%/25%", "revisions": "2", "user": "991/991/991",
		"mounts":  "/opt/mastodon/public/assets claim mastodon-assets, /opt/mastodon/public/system claim mastodon-system",
		"service": "ClusterIP 3000→3000 PreferDualStack",
		"ingress": "social.example.com/ → mastodon-web:3000, social.example.com/api/v1/streaming → mastodon-streaming:4000",
		"tls":     "social.example.com mastodon-tls", "restart": "Always",
	},
	"mastodon-streaming": {
		"image": "ghcr.io/mastodon/mastodon-streaming:v4.3.2", "command": "node ./streaming", "ports": "4000",
		"readiness": "http 4000 /api/v1/streaming/health 0/10/3", "liveness": "http 4000 /api/v1/streaming/health 0/10/3",
		"startup":  "http 4000 /api/v1/streaming/health 5/5/15",
		"replicas": "1", "strategy": "RollingUpdate 10%/25%", "revisions": "2", "user": "991/991/991",
		"service": "ClusterIP 4000→4000 PreferDualStack", "restart": "Always",
	},
	// The chart's one sidekiq worker, all-queues; its readiness check is
	// off by default.
	"mastodon-sidekiq-all-queues": {
		"image":    "ghcr.io/mastodon/mastodon:v4.3.2",
		"command":  "bundle exec sidekiq -c 25 -q default,8 -q push,6 -q ingress,4 -q mailers,2 -q pull -q scheduler -q fasp",
		"replicas": "1", "strategy": "Recreate", "revisions": "2", "user": "991/991/991",
		"mounts":  "/opt/mastodon/public/assets claim mastodon-assets, /opt/mastodon/public/system claim mastodon-system",
		"restart": "Always",
	},
	// The hook after install and upgrade that runs every migration; its
	// pod sets no securityContext (the image's user).
	"mastodon-db-post-migrate": {
		"image": "ghcr.io/mastodon/mastodon:v4.3.2", "command": "bundle exec rake db:migrate", "restart": "Never",
	},
	"mastodon-media-remove": {
		"image": "ghcr.io/mastodon/mastodon:v4.3.2", "command": "bin/tootctl media remove",
		"mounts":   "/opt/mastodon/public/assets claim mastodon-assets, /opt/mastodon/public/system claim mastodon-system",
		"schedule": "0 0 * * 0", "restart": "OnFailure",
	},
	// The claim of uploaded media (persistence.system); storageClassName
	// is empty, the cluster's default class.
	"mastodon-system": {"size": "100Gi", "access modes": "ReadWriteOnce", "storage class": ""},
}

// mastodonComponents are the example's components and the chart objects
// they are.
var mastodonComponents = map[string]string{
	"web": "mastodon-web", "streaming": "mastodon-streaming", "sidekiq": "mastodon-sidekiq-all-queues",
	"db-migrate": "mastodon-db-post-migrate", "media-remove": "mastodon-media-remove",
}

// mastodonDiffers is every field that differs from the chart, and why
// (docs/spec.md, "Expressing an existing app", says the same).
var mastodonDiffers = map[string]string{
	"mastodon-web replicas":       "2 (production_replicas); sidekiq keeps 1, the one process of the scheduler queue",
	"mastodon-streaming replicas": "as web",
	// Probes: production's require_probes; the chart's own check, the
	// file sidekiq writes once it takes jobs, which it leaves off.
	"mastodon-sidekiq-all-queues readiness": "added", "mastodon-sidekiq-all-queues liveness": "added",
	// Requests: require_requests; the project's default requests.
	"mastodon-web requests": "default", "mastodon-streaming requests": "default", "mastodon-sidekiq-all-queues requests": "default",
	"mastodon-db-post-migrate requests": "default", "mastodon-media-remove requests": "default",
	// Limits: the memory limit platform.yaml grants the project, 2Gi;
	// sidekiq removes it, as the chart sets none.
	"mastodon-web limits": "2Gi", "mastodon-streaming limits": "2Gi", "mastodon-db-post-migrate limits": "2Gi",
	"mastodon-media-remove limits": "2Gi",
	// The platform's defaults.security_context: the restricted Pod
	// Security Standard.
	"mastodon-web hardening": "restricted", "mastodon-streaming hardening": "restricted",
	"mastodon-sidekiq-all-queues hardening": "restricted", "mastodon-db-post-migrate hardening": "restricted",
	"mastodon-media-remove hardening": "restricted",
	"mastodon-db-post-migrate user":   "991: the image's USER is the name mastodon, and runAsNonRoot refuses a user it cannot read as a number",
	"mastodon-media-remove user":      "as db-post-migrate",
	// The image holds the compiled assets; a claim mounted over them
	// starts empty.
	"mastodon-web mounts":                "no assets claim; and the claim legacy-imports, one that already exists, read-only",
	"mastodon-sidekiq-all-queues mounts": "no assets claim",
	"mastodon-media-remove mounts":       "no assets claim",
	"mastodon-streaming service":         "NodePort 30400: the example shows node_port",
	"mastodon-streaming service annotations": "prometheus.io/scrape: the streaming server answers /metrics; " +
		"the example shows Service annotations",
	"mastodon-web tls":              "cert-manager issues the certificate into <ingress>-tls, mastodon-web-tls",
	"mastodon-system access modes":  "ReadWriteMany: web runs two replicas, and sidekiq and media-remove mount it too, on any node (the chart pins the cronjob to the rails pods' node instead)",
	"mastodon-system storage class": "nfs, a class that provides ReadWriteMany",
}

// TestMastodonMatchesChart renders examples/real-apps' Mastodon and
// compares each workload, job and cronjob, its Service and Ingress, and
// the shared claim with what Mastodon's chart renders, field by field: the
// fields that differ are exactly those mastodonDiffers lists.
func TestMastodonMatchesChart(t *testing.T) {
	t.Parallel()
	got := render(t, loadRepo(t, nil, "../../examples/real-apps"), nil)
	const dir = "apps/prod-eu/social/mastodon/"
	file := func(comp, prefix string) []byte {
		for p, b := range got {
			if strings.HasPrefix(p, dir+comp+"/"+prefix) {
				return b
			}
		}
		return nil
	}
	services := map[string]*corev1.Service{}
	for _, comp := range []string{"web", "streaming"} {
		var svc corev1.Service
		decode(t, file(comp, "service-"), &svc)
		services[svc.Name] = &svc
	}
	rendered := map[string]map[string]string{}
	for _, comp := range slices.Sorted(maps.Keys(mastodonComponents)) {
		var pod corev1.PodSpec
		ctrl := map[string]string{}
		switch comp {
		case "db-migrate":
			var j batchv1.Job
			decode(t, file(comp, "job-mastodon-db-migrate-"), &j)
			pod = j.Spec.Template.Spec
		case "media-remove":
			var c batchv1.CronJob
			decode(t, file(comp, "cronjob-mastodon-media-remove.yaml"), &c)
			pod, ctrl["schedule"] = c.Spec.JobTemplate.Spec.Template.Spec, c.Spec.Schedule
		default:
			var d appsv1.Deployment
			decode(t, file(comp, "deployment-mastodon-"+comp+".yaml"), &d)
			pod = d.Spec.Template.Spec
			ctrl["replicas"], ctrl["strategy"], ctrl["revisions"] = deploymentFields(&d)
		}
		var ing *networkingv1.Ingress
		if b := file(comp, "ingress-"); b != nil {
			ing = &networkingv1.Ingress{}
			decode(t, b, ing)
		}
		out := mastodonFields(&pod, services["mastodon-"+comp], ing, services)
		maps.Copy(out, ctrl)
		rendered[mastodonComponents[comp]] = out
	}
	var pvc corev1.PersistentVolumeClaim
	for p, b := range got {
		if strings.HasPrefix(p, dir) && strings.HasSuffix(p, "/persistentvolumeclaim-mastodon-system.yaml") {
			decode(t, b, &pvc)
		}
	}
	var modes []string
	for _, m := range pvc.Spec.AccessModes {
		modes = append(modes, string(m))
	}
	rendered["mastodon-system"] = map[string]string{
		"size": quantity(pvc.Spec.Resources.Requests[corev1.ResourceStorage]), "access modes": strings.Join(modes, " "),
		"storage class": deref(pvc.Spec.StorageClassName),
	}

	compared, differ := 0, map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(mastodonChart)) {
		for _, field := range slices.Sorted(maps.Keys(rendered[name])) {
			compared++
			if rendered[name][field] != mastodonChart[name][field] {
				differ[name+" "+field] = fmt.Sprintf("%q, chart %q", rendered[name][field], mastodonChart[name][field])
			}
		}
	}
	checkDiffers(t, differ, mastodonDiffers, "the chart")
	if compared != 5*20+3 {
		t.Errorf("compared %d fields, want %d", compared, 5*20+3)
	}
	t.Logf("Mastodon: %d of %d fields as its chart", compared-len(differ), compared)
}

// deploymentFields are a Deployment's replicas, strategy and revisions
// kept, with Kubernetes' defaults where it sets none.
func deploymentFields(d *appsv1.Deployment) (replicas, strategy, revisions string) {
	replicas = "1"
	if d.Spec.Replicas != nil {
		replicas = strconv.Itoa(int(*d.Spec.Replicas))
	}
	strategy = string(appsv1.RecreateDeploymentStrategyType)
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		surge, unavailable := "25%", "25%"
		if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
			if ru.MaxSurge != nil {
				surge = ru.MaxSurge.String()
			}
			if ru.MaxUnavailable != nil {
				unavailable = ru.MaxUnavailable.String()
			}
		}
		strategy = "RollingUpdate " + surge + "/" + unavailable
	}
	revisions = "10"
	if d.Spec.RevisionHistoryLimit != nil {
		revisions = strconv.Itoa(int(*d.Spec.RevisionHistoryLimit))
	}
	return replicas, strategy, revisions
}

// mastodonFields says what a rendered pod, its Service and its Ingress
// hold, in the words of the mastodonChart table; the controller's own
// fields are left empty for the caller to fill.
func mastodonFields(pod *corev1.PodSpec, svc *corev1.Service, ing *networkingv1.Ingress, services map[string]*corev1.Service) map[string]string {
	c := pod.Containers[0]
	out := map[string]string{"image": c.Image, "replicas": "", "strategy": "", "revisions": "", "schedule": ""}
	out["command"] = strings.Join(append(slices.Clone(c.Command), c.Args...), " ")
	ports := map[string]int32{}
	var cp []string
	for _, p := range c.Ports {
		cp = append(cp, strconv.Itoa(int(p.ContainerPort)))
		ports[p.Name] = p.ContainerPort
	}
	out["ports"] = strings.Join(cp, " ")
	for field, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
		out[field] = mastodonProbe(p, ports)
	}
	out["requests"], out["limits"] = cpuMemory(c.Resources.Requests), cpuMemory(c.Resources.Limits)
	// Whom the pod runs as (user/group/fsGroup), and what else hardens its
	// container: its own settings over the pod's.
	psc, csc := deref(pod.SecurityContext), deref(c.SecurityContext)
	user, group, nonRoot, seccomp := psc.RunAsUser, psc.RunAsGroup, psc.RunAsNonRoot, psc.SeccompProfile
	if csc.RunAsUser != nil {
		user = csc.RunAsUser
	}
	if csc.RunAsGroup != nil {
		group = csc.RunAsGroup
	}
	if csc.RunAsNonRoot != nil {
		nonRoot = csc.RunAsNonRoot
	}
	if csc.SeccompProfile != nil {
		seccomp = csc.SeccompProfile
	}
	id := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	out["user"] = ""
	if user != nil || group != nil || psc.FSGroup != nil {
		out["user"] = id(user) + "/" + id(group) + "/" + id(psc.FSGroup)
	}
	var hard []string
	if deref(nonRoot) {
		hard = append(hard, "non-root")
	}
	if csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation {
		hard = append(hard, "no privilege escalation")
	}
	if caps := csc.Capabilities; caps != nil && len(caps.Drop) > 0 {
		hard = append(hard, "drop "+capList(caps.Drop))
	}
	if deref(csc.ReadOnlyRootFilesystem) {
		hard = append(hard, "read-only root")
	}
	if seccomp != nil {
		hard = append(hard, "seccomp "+string(seccomp.Type))
	}
	out["hardening"] = strings.Join(hard, ", ")
	var mounts []string
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name {
				continue
			}
			s := m.MountPath + " " + v.Name
			if v.PersistentVolumeClaim != nil {
				s = m.MountPath + " claim " + v.PersistentVolumeClaim.ClaimName
			}
			if m.ReadOnly {
				s += " read-only"
			}
			mounts = append(mounts, s)
		}
	}
	out["mounts"] = strings.Join(slices.Sorted(slices.Values(mounts)), ", ")
	out["restart"] = string(pod.RestartPolicy)
	if out["restart"] == "" {
		out["restart"] = string(corev1.RestartPolicyAlways)
	}
	out["service"], out["service annotations"] = "", ""
	if svc != nil {
		s := string(svc.Spec.Type)
		for _, p := range svc.Spec.Ports {
			target := p.TargetPort.IntVal
			if p.TargetPort.Type == intstr.String {
				target = ports[p.TargetPort.StrVal]
			}
			s += fmt.Sprintf(" %d→%d", p.Port, target)
			if p.NodePort != 0 {
				s += fmt.Sprintf(" node %d", p.NodePort)
			}
		}
		if svc.Spec.IPFamilyPolicy != nil {
			s += " " + string(*svc.Spec.IPFamilyPolicy)
		}
		out["service"] = s
		var as []string
		for _, k := range slices.Sorted(maps.Keys(svc.Annotations)) {
			if !strings.HasPrefix(k, "fleetwright.") {
				as = append(as, k+"="+svc.Annotations[k])
			}
		}
		out["service annotations"] = strings.Join(as, " ")
	}
	out["ingress"], out["tls"] = "", ""
	if ing != nil {
		var routes, tls []string
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				b := p.Backend.Service
				port := b.Port.Number
				if b.Port.Name != "" && services[b.Name] != nil {
					for _, sp := range services[b.Name].Spec.Ports {
						if sp.Name == b.Port.Name {
							port = sp.Port
						}
					}
				}
				routes = append(routes, fmt.Sprintf("%s%s → %s:%d", r.Host, p.Path, b.Name, port))
			}
		}
		for _, x := range ing.Spec.TLS {
			tls = append(tls, strings.Join(x.Hosts, " ")+" "+x.SecretName)
		}
		out["ingress"], out["tls"] = strings.Join(routes, ", "), strings.Join(tls, ", ")
	}
	return out
}

// mastodonProbe writes a probe as its check (a named port as its number),
// then its initial delay, period and failure threshold, with Kubernetes'
// defaults where it sets none.
func mastodonProbe(p *corev1.Probe, ports map[string]int32) string {
	if p == nil {
		return ""
	}
	port := func(v intstr.IntOrString) string {
		if v.Type == intstr.String {
			return strconv.Itoa(int(ports[v.StrVal]))
		}
		return v.String()
	}
	var s string
	switch {
	case p.HTTPGet != nil:
		s = "http " + port(p.HTTPGet.Port) + " " + p.HTTPGet.Path
	case p.TCPSocket != nil:
		s = "tcp " + port(p.TCPSocket.Port)
	case p.Exec != nil:
		s = "exec " + strings.Join(p.Exec.Command, " ")
	case p.GRPC != nil:
		s = fmt.Sprintf("grpc %d", p.GRPC.Port)
	}
	period, failures := p.PeriodSeconds, p.FailureThreshold
	if period == 0 {
		period = 10
	}
	if failures == 0 {
		failures = 3
	}
	return fmt.Sprintf("%s %d/%d/%d", s, p.InitialDelaySeconds, period, failures)
}
