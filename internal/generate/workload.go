package generate

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

const defaultCPUTarget = 80

func (r *renderer) workload(a *load.LoadedApp, c *spec.Component) ([]object, error) {
	w := c.WorkloadSpec
	if w == nil {
		return nil, fmt.Errorf("no workload_spec")
	}
	switch c.Type {
	case spec.TypeJob:
		return r.job(a, c)
	case spec.TypeCronJob:
		return r.cronJob(a, c)
	}
	name := objectName(a, c.Name)
	ns := a.Project
	lbls := labels(a, c.Name)
	sel := selector(a, c.Name)

	pt, err := r.pod(a, c, lbls, "")
	if err != nil {
		return nil, err
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls}
	count, autoscale := replicaCount(a, w, &meta)

	svcName := serviceName(a, c)
	headless := w.Service != nil && w.Service.Type == spec.ServiceHeadless
	kind := "Deployment"
	objs := make([]object, 0, 6)
	if len(pt.claims) > 0 {
		kind = "StatefulSet"
		objs = append(objs, statefulSet(w, &pt, meta, count, sel, svcName, headless)...)
	} else {
		objs = append(objs, object{kind, name, &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: kind},
			ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{
				Replicas:             count,
				Selector:             &metav1.LabelSelector{MatchLabels: sel},
				Template:             pt.spec,
				Strategy:             strategy(w.Strategy),
				RevisionHistoryLimit: w.RevisionHistoryLimit,
			},
		}})
	}
	objs = append(objs, pt.extra...)

	if len(pt.service) > 0 || headless {
		objs = append(objs, object{"Service", svcName, service(w.Service, svcName, ns, lbls, sel, pt.service)})
	}
	if ing := w.Ingress; ing != nil && ing.Enabled {
		if port := ingressPort(pt.service); port != "" {
			objs = append(objs, object{"Ingress", name, r.ingress(a, c, name, svcName, port, lbls)})
		}
	}
	if autoscale {
		objs = append(objs, object{"HorizontalPodAutoscaler", name, hpa(w.Autoscaling, kind, name, ns, lbls)})
	}
	if pdb := disruptionBudget(w, a.Spec.Paused, name, ns, lbls, sel); pdb != nil {
		objs = append(objs, object{"PodDisruptionBudget", name, pdb})
	}
	return objs, nil
}

// replicaCount is the replicas field of a workload: nil while an
// autoscaler owns the count (autoscale), 0 while the app is paused (the
// count it goes back to in meta's annotations).
func replicaCount(a *load.LoadedApp, w *spec.WorkloadSpec, meta *metav1.ObjectMeta) (count *int32, autoscale bool) {
	replicas := int32(1)
	if w.Replicas != nil {
		replicas = *w.Replicas
	}
	autoscale = w.Autoscaling != nil && !a.Spec.Paused
	switch {
	case a.Spec.Paused:
		count = new(int32(0))
		paused := replicas
		if w.Autoscaling != nil {
			paused = max(w.Autoscaling.MinReplicas, 1)
		}
		meta.Annotations = map[string]string{layout.AnnotationPausedCount: itoa(int(paused))}
	case autoscale:
		// The autoscaler owns the count; a replicas field here would fight it
		// on every reconcile.
	default:
		count = &replicas
	}
	return count, autoscale
}

// statefulSet is the StatefulSet of a workload with persistent volumes,
// with the headless Service that governs it unless the workload's own
// Service is headless.
func statefulSet(w *spec.WorkloadSpec, pt *podTemplate, meta metav1.ObjectMeta, count *int32, sel map[string]string, svcName string, headless bool) []object {
	var objs []object
	governing := svcName
	if !headless {
		governing = meta.Name + "-headless"
		objs = append(objs, object{"Service", governing, &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: governing, Namespace: meta.Namespace, Labels: meta.Labels},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone, Selector: sel,
				Ports: pt.service, PublishNotReadyAddresses: true,
			},
		}})
	}
	policy := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if !pt.retain {
		policy = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return append(objs, object{"StatefulSet", meta.Name, &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: meta,
		Spec: appsv1.StatefulSetSpec{
			Replicas:             count,
			Selector:             &metav1.LabelSelector{MatchLabels: sel},
			Template:             pt.spec,
			ServiceName:          governing,
			VolumeClaimTemplates: pt.claims,
			RevisionHistoryLimit: w.RevisionHistoryLimit,
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: policy, WhenScaled: policy,
			},
		},
	}})
}

// service is the Service in front of a workload's exposed ports, of the
// type, annotations and IP family policy the spec gives it.
func service(t *spec.Service, name, ns string, lbls, sel map[string]string, ports []corev1.ServicePort) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: sel, Ports: ports},
	}
	if t == nil {
		return svc
	}
	if len(t.Annotations) > 0 {
		svc.Annotations = t.Annotations
	}
	if t.IPFamilyPolicy != "" {
		svc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicy(t.IPFamilyPolicy))
	}
	switch t.Type {
	case spec.ServiceHeadless:
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	case spec.ServiceLoadBalancer, spec.ServiceNodePort:
		svc.Spec.Type = corev1.ServiceType(t.Type)
	}
	return svc
}

// WorkloadObject names the object that runs a workload, job or cronjob
// component's pods: Deployment, StatefulSet (a workload with a persistent
// volume), CronJob, or Job, whose name ends in a hash of its template: for
// a job, name is the prefix of the Job's name, JobName(app, component, "").
func WorkloadObject(a *load.LoadedApp, c *spec.Component) (kind, name string) {
	name = objectName(a, c.Name)
	switch c.Type {
	case spec.TypeJob:
		return "Job", JobName(a.Spec.Name, c.Name, "")
	case spec.TypeCronJob:
		return "CronJob", name
	}
	if c.WorkloadSpec != nil {
		for _, v := range c.WorkloadSpec.Volumes {
			if v.Size != nil {
				return "StatefulSet", name
			}
		}
	}
	return "Deployment", name
}

// serviceName is the name of a workload's Service.
func serviceName(a *load.LoadedApp, c *spec.Component) string {
	if s := c.WorkloadSpec.Service; s != nil && s.Name != "" {
		return s.Name
	}
	return objectName(a, c.Name)
}

// ingressPort is the Service port an Ingress sends traffic to: the one
// named http, else the first TCP one.
func ingressPort(ps []corev1.ServicePort) string {
	first := ""
	for _, p := range ps {
		if p.Name == "http" {
			return p.Name
		}
		if first == "" && p.Protocol == corev1.ProtocolTCP {
			first = p.Name
		}
	}
	return first
}

// ServicePort is the port a workload's exports use: that of the first
// exposed port of its Service (the seed's port, or the first of ports), 0
// when nothing is exposed.
func ServicePort(w *spec.WorkloadSpec) int {
	if w.Port > 0 {
		return w.Port
	}
	for _, p := range w.Ports {
		if p.Expose != nil && !*p.Expose {
			continue
		}
		if p.ServicePort != 0 {
			return p.ServicePort
		}
		return p.Port
	}
	return 0
}

// disruptionBudget is the workload's PodDisruptionBudget: as the spec says,
// else max_unavailable 1 when more than one pod runs (or may: autoscaling)
// and the app is not paused, else none.
func disruptionBudget(w *spec.WorkloadSpec, paused bool, name, ns string, lbls, sel map[string]string) *policyv1.PodDisruptionBudget {
	var spec_ policyv1.PodDisruptionBudgetSpec
	switch db := w.DisruptionBudget; {
	case db != nil:
		spec_.MaxUnavailable = intOrPercent(db.MaxUnavailable)
		spec_.MinAvailable = intOrPercent(db.MinAvailable)
		if spec_.MaxUnavailable == nil && spec_.MinAvailable == nil {
			return nil
		}
	case !paused && (w.Autoscaling != nil || w.Replicas != nil && *w.Replicas > 1):
		one := intstr.FromInt32(1)
		spec_.MaxUnavailable = &one
	default:
		return nil
	}
	spec_.Selector = &metav1.LabelSelector{MatchLabels: sel}
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Spec:       spec_,
	}
}

func intOrPercent(v *spec.IntOrPercent) *intstr.IntOrString {
	if v == nil {
		return nil
	}
	if n, ok := v.Int(); ok {
		x := intstr.FromInt(n)
		return &x
	}
	x := intstr.FromString(v.String())
	return &x
}

func (r *renderer) ingress(a *load.LoadedApp, c *spec.Component, name, service, port string, lbls map[string]string) *networkingv1.Ingress {
	ing := c.WorkloadSpec.Ingress
	plat := r.opts.Platform
	host := load.IngressHost(a, c, plat)
	prefix := networkingv1.PathTypePrefix
	var paths []networkingv1.HTTPIngressPath
	if len(ing.Routes) == 0 {
		p := ing.Path
		if p == "" {
			p = "/"
		}
		paths = []networkingv1.HTTPIngressPath{{
			Path: p, PathType: &prefix,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: service, Port: networkingv1.ServiceBackendPort{Name: port},
			}},
		}}
	}
	var routes []spec.Route
	if len(ing.Routes) > 0 {
		routes = spec.IngressRoutes(c)
	}
	for _, rt := range routes {
		svc, p := service, rt.Port
		if rt.Component != c.Name {
			t := a.Component(rt.Component)
			if t == nil || t.WorkloadSpec == nil {
				continue // validation reports it
			}
			svc = serviceName(a, t)
			if p == "" {
				p = spec.DefaultIngressPort(t.WorkloadSpec)
			}
		} else if p == "" {
			p = port
		}
		paths = append(paths, networkingv1.HTTPIngressPath{
			Path: rt.Path, PathType: &prefix,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: svc, Port: networkingv1.ServiceBackendPort{Name: p},
			}},
		})
	}
	obj := &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.Project, Labels: lbls},
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{
				Host:             host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}},
			}},
		},
	}
	if plat.IngressClass != "" {
		cls := plat.IngressClass
		obj.Spec.IngressClassName = &cls
	}
	if ing.TLS == nil || *ing.TLS {
		// One certificate per host: of the app's Ingresses of one host,
		// that of the first component by name requests it, and the others
		// serve its Secret.
		secret := name + "-tls"
		owner := c.Name
		if sharedHosts(a) {
			owner = load.HostCertificateOwner(a, host, plat)
		}
		if owner == c.Name {
			key := "cert-manager.io/cluster-issuer"
			if plat.CertIssuer.Kind == "Issuer" {
				key = "cert-manager.io/issuer"
			}
			obj.Annotations = map[string]string{key: plat.CertIssuer.Name}
		} else {
			secret = objectName(a, owner) + "-tls"
		}
		obj.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: secret}}
	}
	return obj
}

// sharedHosts reports whether more than one component of the app has an
// ingress, so that two may serve one host.
func sharedHosts(a *load.LoadedApp) bool {
	n := 0
	for i := range a.Spec.Components {
		if w := a.Spec.Components[i].WorkloadSpec; w != nil && w.Ingress != nil && w.Ingress.Enabled {
			n++
		}
	}
	return n > 1
}

func hpa(as *spec.Autoscaling, kind, name, ns string, lbls map[string]string) *autoscalingv2.HorizontalPodAutoscaler {
	minR := max(as.MinReplicas, 1)
	var metrics []autoscalingv2.MetricSpec
	util := func(res corev1.ResourceName, target int32) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: res, Target: autoscalingv2.MetricTarget{
				Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &target,
			}},
		}
	}
	cpu := as.CPUTarget
	if cpu == 0 && as.MemoryTarget == 0 {
		cpu = defaultCPUTarget
	}
	if cpu > 0 {
		metrics = append(metrics, util(corev1.ResourceCPU, cpu))
	}
	if as.MemoryTarget > 0 {
		metrics = append(metrics, util(corev1.ResourceMemory, as.MemoryTarget))
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: kind, Name: name},
			MinReplicas:    &minR,
			MaxReplicas:    as.MaxReplicas,
			Metrics:        metrics,
		},
	}
}

// resources is a container's resources over the defaults of its project
// (spec.Platform.ResourcesFor; none removes a default), as Kubernetes
// takes them.
func (r *renderer) resources(project string, w *spec.Resources) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	convert := func(l *spec.ResourceList) corev1.ResourceList {
		if l == nil {
			return nil
		}
		var dst corev1.ResourceList
		for name, q := range map[corev1.ResourceName]*spec.Quantity{corev1.ResourceCPU: l.CPU, corev1.ResourceMemory: l.Memory} {
			if q == nil {
				continue
			}
			v, err := resource.ParseQuantity(q.String())
			if err != nil {
				continue // validation refused it already
			}
			if dst == nil {
				dst = corev1.ResourceList{}
			}
			dst[name] = v
		}
		return dst
	}
	merged := r.opts.Platform.ResourcesFor(project, w)
	out.Requests, out.Limits = convert(merged.Requests), convert(merged.Limits)
	// A default request must not exceed the workload's own limit.
	for name, lim := range out.Limits {
		if req, ok := out.Requests[name]; ok && req.Cmp(lim) > 0 {
			out.Requests[name] = lim
		}
	}
	return out
}

// env wires a container's env vars, in the spec's order, with the hidden
// vars of composed exports right before the var that uses them, and adds
// the exports it resolves to used (their checksum goes on the pod).
func (r *renderer) env(a *load.LoadedApp, c *spec.Component, in []spec.EnvVar, used map[string]exports.Export) ([]corev1.EnvVar, error) {
	var out []corev1.EnvVar
	var earlier map[string]bool // the spec's names so far, for $(NAME)
	for i, e := range in {
		switch {
		case e.Value != nil:
			if earlier == nil && i > 0 && strings.Contains(*e.Value, "$(") {
				earlier = make(map[string]bool, i)
				for _, p := range in[:i] {
					earlier[p.Name] = true
				}
			}
			out = append(out, corev1.EnvVar{Name: e.Name, Value: expandable(*e.Value, earlier)})
		case e.SecretRef != nil:
			sel := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: e.SecretRef.Name}, Key: e.SecretRef.Key}
			if e.SecretRef.Optional {
				sel.Optional = new(true)
			}
			out = append(out, corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: sel}})
		case e.ExportRef != nil:
			exp, ref, err := r.resolve(a, c, e.ExportRef)
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			used[ref] = exp
			for _, v := range exports.Wire(e.Name, exp) {
				ev := corev1.EnvVar{Name: v.Name, Value: v.Value}
				if v.Secret != nil {
					ev.Value = ""
					ev.ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: v.Secret.Name}, Key: v.Secret.Key,
					}}
				}
				out = append(out, ev)
			}
		}
		if earlier != nil {
			earlier[e.Name] = true
		}
	}
	seen := make(map[string]bool, len(out))
	for _, e := range out {
		if seen[e.Name] {
			return nil, fmt.Errorf("env var %s is set twice after export wiring; rename one", e.Name)
		}
		seen[e.Name] = true
	}
	return out, nil
}

// expandable writes a literal value for Kubernetes' $(VAR) expansion: a
// $(NAME) of an earlier entry (in earlier) stays a reference; every other
// $( and $$ is escaped, so it reaches the container as written, except
// $$(, which the user wrote to mean a literal $( and which Kubernetes
// turns into one.
func expandable(s string, earlier map[string]bool) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			if i+2 < len(s) && s[i+2] == '(' {
				b.WriteString("$$(")
				i += 2
				continue
			}
			b.WriteString("$$$$")
			i++
		case '(':
			if j := strings.IndexByte(s[i+2:], ')'); j >= 0 && earlier[s[i+2:i+2+j]] {
				b.WriteString(s[i : i+3+j])
				i += 2 + j
				continue
			}
			b.WriteString("$$(")
			i++
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// resolve finds the export an export_ref names.
func (r *renderer) resolve(a *load.LoadedApp, c *spec.Component, ref *spec.ExportRef) (exports.Export, string, error) {
	plat := r.opts.Platform
	if ref.AddonInstanceID != "" {
		for _, inst := range plat.AddonInstances {
			if inst.ID == ref.AddonInstanceID {
				exp, err := exports.Lookup(exports.AddonInput{
					Type: inst.Type, Release: inst.Release, Namespace: inst.Namespace,
					Values: inst.Values, Declared: declared(inst.Exports),
				}, ref.ExportKey)
				return exp, "instance/" + inst.ID + "/" + ref.ExportKey, err
			}
		}
		return exports.Export{}, "", fmt.Errorf("no addon instance %q", ref.AddonInstanceID)
	}
	target := a
	if ref.App != "" && ref.App != a.Spec.Name {
		target = r.apps[a.App().Sibling(ref.App).Key()]
		if target == nil {
			return exports.Export{}, "", fmt.Errorf("no app %q", ref.App)
		}
	}
	tc := target.Component(ref.Component)
	if tc == nil {
		return exports.Export{}, "", fmt.Errorf("no component %q", ref.Component)
	}
	id := target.Spec.Name + "/" + tc.Name + "/" + ref.ExportKey
	switch {
	case tc.WorkloadSpec != nil && tc.Type == spec.TypeWorkload:
		all := exports.ForWorkload(serviceName(target, tc), target.Project, ServicePort(tc.WorkloadSpec))
		exp, ok := all[ref.ExportKey]
		if !ok {
			return exports.Export{}, "", fmt.Errorf("workload %s has no export %q", tc.Name, ref.ExportKey)
		}
		return exp, id, nil
	case tc.AddonSpec != nil:
		exp, err := exports.Lookup(addonInput(target, tc), ref.ExportKey)
		return exp, id, err
	}
	return exports.Export{}, "", fmt.Errorf("component %s exports nothing", tc.Name)
}

func addonInput(a *load.LoadedApp, c *spec.Component) exports.AddonInput {
	s := c.AddonSpec
	return exports.AddonInput{
		Type: s.Type, Release: objectName(a, c.Name), Namespace: a.Project, Chart: s.Chart.Name,
		Values:   exports.WithFullnameOverride(s.Values, objectName(a, c.Name)),
		Declared: declared(s.Exports),
	}
}

func declared(ds []spec.DeclaredExport) []exports.Declared {
	out := make([]exports.Declared, 0, len(ds))
	for _, d := range ds {
		x := exports.Declared{Key: d.Key, Description: d.Description}
		if d.Value != nil {
			x.Value = *d.Value
		}
		if d.SecretRef != nil {
			x.Secret = &exports.SecretKeyRef{Name: d.SecretRef.Name, Key: d.SecretRef.Key}
		}
		out = append(out, x)
	}
	return slices.Clip(out)
}

// strategy is a Deployment's strategy as the spec says it (nil: Kubernetes'
// default, a rolling update of 25% and 25%).
func strategy(s *spec.Strategy) appsv1.DeploymentStrategy {
	if s == nil {
		return appsv1.DeploymentStrategy{}
	}
	if s.Type == string(appsv1.RecreateDeploymentStrategyType) {
		return appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}
	out := appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	if s.MaxSurge != nil || s.MaxUnavailable != nil {
		out.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: intOrPercent(s.MaxSurge), MaxUnavailable: intOrPercent(s.MaxUnavailable)}
	}
	return out
}
