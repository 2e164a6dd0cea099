package generate

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/spec"
)

const defaultCPUTarget = 80

func (r *renderer) workload(a *spec.LoadedApp, c *spec.Component) ([]object, error) {
	w := c.WorkloadSpec
	name := objectName(a, c.Name)
	ns := a.Project
	lbls := labels(a, c.Name)
	sel := selector(a, c.Name)

	env, sum, err := r.env(a, c)
	if err != nil {
		return nil, err
	}
	image := w.Image
	if img, ok := r.opts.Images[spec.NodeID(a, c.Name)]; ok {
		image = img
	}
	if image == "" {
		return nil, fmt.Errorf("no image: build_mode %s images must be built before rendering", w.BuildMode)
	}
	container := corev1.Container{
		Name:      c.Name,
		Image:     image,
		Command:   w.Command,
		Args:      w.Args,
		Env:       env,
		Resources: r.resources(w.Resources),
	}
	if w.Port > 0 {
		container.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: int32(w.Port), Protocol: corev1.ProtocolTCP}}
	}
	if hc := w.HealthCheck; hc != nil {
		port := intstr.FromString("http")
		if hc.Port != 0 {
			port = intstr.FromInt32(int32(hc.Port))
		}
		period := hc.PeriodSeconds
		if period == 0 {
			period = 10
		}
		delay := hc.InitialDelaySeconds
		if delay == 0 {
			delay = 10
		}
		get := &corev1.HTTPGetAction{Path: hc.Path, Port: port}
		container.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: get}, PeriodSeconds: period, FailureThreshold: 3}
		container.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: get.DeepCopy()}, InitialDelaySeconds: delay, PeriodSeconds: period, FailureThreshold: 3}
	}
	podAnno := map[string]string{}
	if sum != "" {
		podAnno[AnnoExportsSum] = sum
	}
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: lbls, Annotations: podAnno},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
	}
	for _, s := range w.ImagePullSecrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	replicas := int32(1)
	if w.Replicas != nil {
		replicas = *w.Replicas
	}
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: pod,
		},
	}
	autoscale := w.Autoscaling != nil && !a.Spec.Paused
	switch {
	case a.Spec.Paused:
		zero := int32(0)
		dep.Spec.Replicas = &zero
		paused := replicas
		if w.Autoscaling != nil {
			paused = max(w.Autoscaling.MinReplicas, 1)
		}
		dep.Annotations = map[string]string{AnnoPausedCount: itoa(int(paused))}
	case autoscale:
		// The autoscaler owns the count; a replicas field here would fight it
		// on every reconcile.
	default:
		dep.Spec.Replicas = &replicas
	}
	objs := []object{{"Deployment", name, dep}}

	if w.Port > 0 {
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeClusterIP,
				Selector: sel,
				Ports:    []corev1.ServicePort{{Name: "http", Port: int32(w.Port), TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
			},
		}
		objs = append(objs, object{"Service", name, svc})
	}
	if ing := w.Ingress; ing != nil && ing.Enabled && w.Port > 0 {
		objs = append(objs, object{"Ingress", name, r.ingress(a, c, name, lbls)})
	}
	if autoscale {
		objs = append(objs, object{"HorizontalPodAutoscaler", name, hpa(w.Autoscaling, name, ns, lbls)})
	}
	return objs, nil
}

func (r *renderer) ingress(a *spec.LoadedApp, c *spec.Component, name string, lbls map[string]string) *networkingv1.Ingress {
	ing := c.WorkloadSpec.Ingress
	plat := r.opts.Platform
	host := spec.IngressHost(a, c, plat)
	p := ing.Path
	if p == "" {
		p = "/"
	}
	prefix := networkingv1.PathTypePrefix
	obj := &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.Project, Labels: lbls},
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path: p, PathType: &prefix,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: name, Port: networkingv1.ServiceBackendPort{Name: "http"},
						}},
					}},
				}},
			}},
		},
	}
	if plat.IngressClass != "" {
		cls := plat.IngressClass
		obj.Spec.IngressClassName = &cls
	}
	if ing.TLS == nil || *ing.TLS {
		key := "cert-manager.io/cluster-issuer"
		if plat.CertIssuer.Kind == "Issuer" {
			key = "cert-manager.io/issuer"
		}
		obj.Annotations = map[string]string{key: plat.CertIssuer.Name}
		obj.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: name + "-tls"}}
	}
	return obj
}

func hpa(as *spec.Autoscaling, name, ns string, lbls map[string]string) *autoscalingv2.HorizontalPodAutoscaler {
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
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    &minR,
			MaxReplicas:    as.MaxReplicas,
			Metrics:        metrics,
		},
	}
}

// resources merges the workload's resources over the platform defaults.
func (r *renderer) resources(w *spec.Resources) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	apply := func(dst *corev1.ResourceList, l *spec.ResourceList) {
		if l == nil {
			return
		}
		set := func(name corev1.ResourceName, q *spec.Quantity) {
			if q == nil {
				return
			}
			v, err := resource.ParseQuantity(q.String())
			if err != nil {
				return // validation refused it already
			}
			if *dst == nil {
				*dst = corev1.ResourceList{}
			}
			(*dst)[name] = v
		}
		set(corev1.ResourceCPU, l.CPU)
		set(corev1.ResourceMemory, l.Memory)
	}
	if d := r.opts.Platform.Defaults; d != nil && d.Resources != nil {
		apply(&out.Requests, d.Resources.Requests)
		apply(&out.Limits, d.Resources.Limits)
	}
	if w != nil {
		apply(&out.Requests, w.Requests)
		apply(&out.Limits, w.Limits)
	}
	// A default request must not exceed the workload's own limit.
	for name, lim := range out.Limits {
		if req, ok := out.Requests[name]; ok && req.Cmp(lim) > 0 {
			out.Requests[name] = lim
		}
	}
	return out
}

// env wires the workload's env vars, in the spec's order, with the hidden
// vars of composed exports right before the var that uses them. It returns
// a checksum of the resolved exports ("" when none are used).
func (r *renderer) env(a *spec.LoadedApp, c *spec.Component) ([]corev1.EnvVar, string, error) {
	var out []corev1.EnvVar
	used := map[string]exports.Export{}
	for _, e := range c.WorkloadSpec.Env {
		switch {
		case e.Value != nil:
			out = append(out, corev1.EnvVar{Name: e.Name, Value: escapeDollar(*e.Value)})
		case e.SecretRef != nil:
			out = append(out, corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: e.SecretRef.Name}, Key: e.SecretRef.Key,
			}}})
		case e.ExportRef != nil:
			exp, ref, err := r.resolve(a, c, e.ExportRef)
			if err != nil {
				return nil, "", fmt.Errorf("env %s: %w", e.Name, err)
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
	}
	seen := map[string]bool{}
	for _, e := range out {
		if seen[e.Name] {
			return nil, "", fmt.Errorf("env var %s is set twice after export wiring; rename one", e.Name)
		}
		seen[e.Name] = true
	}
	if len(used) == 0 {
		return out, "", nil
	}
	return out, exports.Checksum(used), nil
}

// escapeDollar keeps a literal value literal under Kubernetes $(VAR)
// expansion.
func escapeDollar(s string) string {
	if !containsRef(s) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '$' {
			b = append(b, '$')
		}
		b = append(b, s[i])
	}
	return string(b)
}

func containsRef(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '$' && (s[i+1] == '(' || s[i+1] == '$') {
			return true
		}
	}
	return false
}

// resolve finds the export an export_ref names.
func (r *renderer) resolve(a *spec.LoadedApp, c *spec.Component, ref *spec.ExportRef) (exports.Export, string, error) {
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
		target = r.apps[a.Cluster+"/"+a.Project+"/"+ref.App]
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
	case tc.WorkloadSpec != nil:
		all := exports.ForWorkload(objectName(target, tc.Name), target.Project, tc.WorkloadSpec.Port)
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

func addonInput(a *spec.LoadedApp, c *spec.Component) exports.AddonInput {
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
