package generate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// filesVolume is the name of the volume holding a component's files; a
// user's volume of that name is refused.
const filesVolume = "fleetwright-files"

// podTemplate is what every workload kind (Deployment, StatefulSet, Job,
// CronJob) shares: the pod template and the objects that go with it.
type podTemplate struct {
	spec corev1.PodTemplateSpec
	// claims are the volumeClaimTemplates of the persistent volumes.
	claims []corev1.PersistentVolumeClaim
	// retain is false when some persistent volume says retain: false.
	retain bool
	// service lists the exposed ports of every container, in order.
	service []corev1.ServicePort
	// extra objects: the files' ConfigMap, a created ServiceAccount.
	extra []object
}

// FilesConfigMapName is the name of the ConfigMap holding a component's files.
func FilesConfigMapName(app, component string) string { return app + "-" + component + "-files" }

// pod builds the pod template of a workload, job or cronjob component.
// restart is the pod's restart policy ("" for long-running workloads).
// It returns the template by value and builds the workload's container in
// place: at 10,000 apps, heap copies of these large structs cost more than
// the rest of the pod's rendering.
func (r *renderer) pod(a *load.LoadedApp, c *spec.Component, lbls map[string]string, restart corev1.RestartPolicy) (pt podTemplate, err error) {
	w := c.WorkloadSpec
	pt.retain = true
	used := map[string]exports.Export{}
	containers := make([]corev1.Container, 1)
	main := &containers[0]
	if err := r.mainContainer(a, c, main, &pt, used); err != nil {
		return pt, err
	}

	// Pod-level security settings come from the workload's container: the
	// fields Kubernetes keeps per pod (fs_group) and those every container
	// inherits unless it says otherwise (run_as_*, seccomp).
	merged := r.securityContext(a.Project, w.SecurityContext)
	podSC := podSecurity(merged)
	main.SecurityContext = containerSecurity(merged, podSC)

	pod := corev1.PodSpec{SecurityContext: podSC, RestartPolicy: restart}
	for _, h := range w.HostAliases {
		pod.HostAliases = append(pod.HostAliases, corev1.HostAlias{IP: h.IP, Hostnames: h.Hostnames})
	}
	vols, err := podVolumes(a, c, lbls, &pod, main, &pt)
	if err != nil {
		return pt, err
	}
	annotations := map[string]string{}
	if len(w.Files) > 0 {
		cm, sum, mounts, items, err := files(a, c, lbls, w.Files)
		if err != nil {
			return pt, err
		}
		pt.extra = append(pt.extra, object{"ConfigMap", cm.Name, cm})
		annotations[layout.AnnotationFilesSum] = sum
		main.VolumeMounts = append(main.VolumeMounts, mounts...)
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: filesVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, Items: items,
		}}})
	}
	if err := r.extraContainers(a, c, &pod, &pt, vols, podSC, used); err != nil {
		return pt, err
	}
	pod.Containers = containers
	for _, s := range w.ImagePullSecrets {
		pod.ImagePullSecrets = append(pod.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	serviceAccount(a, c, lbls, &pod, &pt)
	podLabels := podSettings(w.Pod, lbls, &pod, annotations)
	if len(used) > 0 {
		annotations[layout.AnnotationExportsSum] = exports.Checksum(used)
	}
	pt.spec = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: annotations},
		Spec:       pod,
	}
	return pt, nil
}

// mainContainer builds the workload's own container in place: its image
// (built or pinned), command, env, resources, ports (added to the
// Service's) and probes.
func (r *renderer) mainContainer(a *load.LoadedApp, c *spec.Component, main *corev1.Container, pt *podTemplate, used map[string]exports.Export) error {
	w := c.WorkloadSpec
	image := w.Image
	if img, ok := r.opts.Images[load.NodeID(a, c.Name)]; ok {
		image = img
	}
	if image == "" {
		return fmt.Errorf("no image: build_mode %s images must be built before rendering", w.BuildMode)
	}
	env, err := r.env(a, c, a.Spec.WorkloadEnv(w), used)
	if err != nil {
		return err
	}
	*main = corev1.Container{
		Name:      c.Name,
		Image:     image,
		Command:   w.Command,
		Args:      w.Args,
		Env:       env,
		EnvFrom:   envFrom(a.Spec.WorkloadEnvFrom(w)),
		Resources: r.resources(a.Project, w.Resources),
	}
	declared := w.Ports
	if w.Port > 0 {
		declared = []spec.Port{{Name: "http", Port: w.Port}}
	}
	main.Ports, pt.service = containerPorts(declared, pt.service)
	if hc := w.HealthCheck; hc != nil {
		main.ReadinessProbe, main.LivenessProbe = healthCheck(hc, declared)
	}
	if w.Probes != nil {
		return probes(main, w.Probes, declared)
	}
	return nil
}

// podVolumes adds the component's volumes to the pod, in the spec's
// order, and mounts those with a mount path in the workload's container:
// a persistent one becomes a claim template, a shared one the app's claim
// (written with the component that owns it). It returns the volumes' names.
func podVolumes(a *load.LoadedApp, c *spec.Component, lbls map[string]string, pod *corev1.PodSpec, main *corev1.Container, pt *podTemplate) (map[string]bool, error) {
	vols := map[string]bool{}
	for _, v := range c.WorkloadSpec.Volumes {
		if v.Name == filesVolume {
			return nil, fmt.Errorf("volume %s: the name is reserved for the component's files", v.Name)
		}
		vols[v.Name] = true
		if v.Size != nil {
			if c.Type != spec.TypeWorkload {
				return nil, fmt.Errorf("volume %s: a persistent volume (size) needs type workload, not %s", v.Name, c.Type)
			}
			claim, err := claimTemplate(v)
			if err != nil {
				return nil, err
			}
			pt.claims = append(pt.claims, claim)
			if v.Retain != nil && !*v.Retain {
				pt.retain = false
			}
		} else {
			src, err := volumeSource(v, a)
			if err != nil {
				return nil, err
			}
			pod.Volumes = append(pod.Volumes, corev1.Volume{Name: v.Name, VolumeSource: src})
			if v.Shared != "" {
				if err := sharedClaimOf(a, c, v.Shared, lbls, pt); err != nil {
					return nil, err
				}
			}
		}
		if v.MountPath != "" {
			main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{
				Name: v.Name, MountPath: v.MountPath, SubPath: v.SubPath,
				ReadOnly: v.ReadOnly || v.Secret != nil || v.ConfigMap != nil,
			})
		}
	}
	return vols, nil
}

// volumeSource is where a volume other than a persistent one (size) comes
// from.
func volumeSource(v spec.Volume, a *load.LoadedApp) (corev1.VolumeSource, error) {
	switch {
	case v.Shared != "":
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: spec.SharedClaimName(a.Spec.Name, v.Shared)}}, nil
	case v.Claim != "":
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.Claim}}, nil
	case v.EmptyDir != nil:
		ed := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium(v.EmptyDir.Medium)}
		if v.EmptyDir.SizeLimit != nil {
			q, err := resource.ParseQuantity(v.EmptyDir.SizeLimit.String())
			if err != nil {
				return corev1.VolumeSource{}, fmt.Errorf("volume %s: size_limit: %w", v.Name, err)
			}
			ed.SizeLimit = &q
		}
		return corev1.VolumeSource{EmptyDir: ed}, nil
	case v.Secret != nil:
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: v.Secret.Name, Items: keyPaths(v.Secret.Items), Optional: optional(v.Secret.Optional), DefaultMode: v.Secret.DefaultMode,
		}}, nil
	case v.ConfigMap != nil:
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: v.ConfigMap.Name},
			Items:                keyPaths(v.ConfigMap.Items), Optional: optional(v.ConfigMap.Optional), DefaultMode: v.ConfigMap.DefaultMode,
		}}, nil
	}
	return corev1.VolumeSource{}, fmt.Errorf("volume %s: set one of size, shared, claim, empty_dir, secret or config_map", v.Name)
}

// sharedClaimOf adds the app-wide claim name to the component's objects
// when the component owns it (the first workload by name that mounts it),
// once.
func sharedClaimOf(a *load.LoadedApp, c *spec.Component, name string, lbls map[string]string, pt *podTemplate) error {
	claim := spec.SharedClaimName(a.Spec.Name, name)
	av := a.Spec.SharedVolume(name)
	if av == nil || a.Spec.SharedVolumeOwner(name) != c.Name ||
		slices.ContainsFunc(pt.extra, func(o object) bool { return o.kind == "PersistentVolumeClaim" && o.name == claim }) {
		return nil
	}
	pvc, err := sharedClaim(a, av, lbls)
	if err != nil {
		return err
	}
	pt.extra = append(pt.extra, object{"PersistentVolumeClaim", claim, pvc})
	return nil
}

// extraContainers adds the init containers, which run in order, then the
// sidecars, which start next (native sidecars: init containers that keep
// running, Kubernetes ≥ 1.29) and run beside the workload's container for
// the pod's lifetime; a sidecar's ports join the Service's.
func (r *renderer) extraContainers(a *load.LoadedApp, c *spec.Component, pod *corev1.PodSpec, pt *podTemplate, vols map[string]bool, podSC *corev1.PodSecurityContext, used map[string]exports.Export) error {
	w := c.WorkloadSpec
	for _, x := range w.InitContainers {
		ctr, err := r.extraContainer(a, c, x, vols, podSC, used, false)
		if err != nil {
			return fmt.Errorf("init container %s: %w", x.Name, err)
		}
		pod.InitContainers = append(pod.InitContainers, ctr)
	}
	for _, x := range w.Sidecars {
		ctr, err := r.extraContainer(a, c, x, vols, podSC, used, true)
		if err != nil {
			return fmt.Errorf("sidecar %s: %w", x.Name, err)
		}
		always := corev1.ContainerRestartPolicyAlways
		ctr.RestartPolicy = &always
		ctr.Ports, pt.service = containerPorts(x.Ports, pt.service)
		pod.InitContainers = append(pod.InitContainers, ctr)
	}
	return nil
}

// serviceAccount sets the identity the pods run as, and adds the account
// to the component's objects when the spec creates it.
func serviceAccount(a *load.LoadedApp, c *spec.Component, lbls map[string]string, pod *corev1.PodSpec, pt *podTemplate) {
	sa := c.WorkloadSpec.ServiceAccount
	if sa == nil {
		// A pod that names no identity gets no API token: it runs as the
		// namespace's default account, which it has no reason to use.
		pod.AutomountServiceAccountToken = new(false)
		return
	}
	name := sa.Name
	if name == "" {
		name = objectName(a, c.Name)
	}
	pod.ServiceAccountName = name
	if sa.Create {
		pt.extra = append(pt.extra, object{"ServiceAccount", name, &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.Project, Labels: lbls, Annotations: sa.Annotations},
		}})
	}
}

// podSettings applies the spec's pod settings: scheduling, priority and
// termination grace on the pod, its annotations into annotations. It
// returns the pod template's labels: the spec's, with fleetwright's own
// winning.
func podSettings(p *spec.Pod, lbls map[string]string, pod *corev1.PodSpec, annotations map[string]string) map[string]string {
	if p == nil {
		return lbls
	}
	podLabels := lbls
	if len(p.Labels) > 0 {
		podLabels = maps.Clone(p.Labels)
		maps.Copy(podLabels, lbls) // fleetwright's own labels win
	}
	maps.Copy(annotations, p.Annotations)
	pod.NodeSelector = p.NodeSelector
	for _, t := range p.Tolerations {
		pod.Tolerations = append(pod.Tolerations, corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds,
		})
	}
	pod.PriorityClassName = p.PriorityClass
	pod.TerminationGracePeriodSeconds = p.TerminationGracePeriodSeconds
	return podLabels
}

// extraContainer builds an init container or a sidecar.
func (r *renderer) extraContainer(a *load.LoadedApp, c *spec.Component, x spec.Container, vols map[string]bool, podSC *corev1.PodSecurityContext, used map[string]exports.Export, sidecar bool) (corev1.Container, error) {
	env, err := r.env(a, c, x.Env, used)
	if err != nil {
		return corev1.Container{}, err
	}
	ctr := corev1.Container{
		Name: x.Name, Image: x.Image, Command: x.Command, Args: x.Args,
		Env: env, EnvFrom: envFrom(x.EnvFrom), Resources: r.resources(a.Project, x.Resources),
		SecurityContext: containerSecurity(r.securityContext(a.Project, x.SecurityContext), podSC),
	}
	if !sidecar {
		ctr.Ports, _ = containerPorts(x.Ports, nil)
	}
	if x.Probes != nil {
		if !sidecar {
			return corev1.Container{}, fmt.Errorf("probes: an init container runs to completion and takes none")
		}
		if err := probes(&ctr, x.Probes, x.Ports); err != nil {
			return corev1.Container{}, err
		}
	}
	for _, m := range x.VolumeMounts {
		if !vols[m.Name] {
			return corev1.Container{}, fmt.Errorf("volume_mounts: no volume %q in the component's volumes", m.Name)
		}
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: m.Name, MountPath: m.MountPath, SubPath: m.SubPath, ReadOnly: m.ReadOnly})
	}
	return ctr, nil
}

// containerPorts returns a container's ports and appends its exposed ones
// to the Service's.
func containerPorts(ps []spec.Port, svc []corev1.ServicePort) ([]corev1.ContainerPort, []corev1.ServicePort) {
	var out []corev1.ContainerPort
	for _, p := range ps {
		proto := corev1.Protocol(p.Protocol)
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		out = append(out, corev1.ContainerPort{Name: p.Name, ContainerPort: int32(p.Port), Protocol: proto})
		if p.Expose != nil && !*p.Expose {
			continue
		}
		sp := p.ServicePort
		if sp == 0 {
			sp = p.Port
		}
		svc = append(svc, corev1.ServicePort{Name: p.Name, Port: int32(sp), TargetPort: intstr.FromString(p.Name), Protocol: proto, NodePort: int32(p.NodePort)})
	}
	return out, svc
}

// healthCheck is the seed's one HTTP check, used for readiness and
// liveness, on its port or else on the container's port that callers
// reach (defaultProbePort), by that port's name: http for a workload's
// port.
func healthCheck(hc *spec.HealthCheck, ports []spec.Port) (readiness, liveness *corev1.Probe) {
	var port intstr.IntOrString
	switch def := defaultProbePort(ports); {
	case hc.Port != 0:
		port = intstr.FromInt32(int32(hc.Port))
	case def != 0:
		i := slices.IndexFunc(ports, func(p spec.Port) bool { return p.Port == def })
		port = intstr.FromString(ports[i].Name)
	default:
		port = intstr.FromString("http") // validation refused a check without a TCP port
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
	readiness = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: get}, PeriodSeconds: period, FailureThreshold: 3}
	liveness = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: get.DeepCopy()}, InitialDelaySeconds: delay, PeriodSeconds: period, FailureThreshold: 3}
	return readiness, liveness
}

func probes(ctr *corev1.Container, ps *spec.Probes, ports []spec.Port) error {
	for _, x := range []struct {
		name string
		in   *spec.Probe
		out  **corev1.Probe
	}{{"readiness", ps.Readiness, &ctr.ReadinessProbe}, {"liveness", ps.Liveness, &ctr.LivenessProbe}, {"startup", ps.Startup, &ctr.StartupProbe}} {
		if x.in == nil {
			continue
		}
		p, err := probe(x.in, ports)
		if err != nil {
			return fmt.Errorf("probes.%s: %w", x.name, err)
		}
		*x.out = p
	}
	return nil
}

// probe converts one probe. Timings left out keep Kubernetes' defaults.
func probe(in *spec.Probe, ports []spec.Port) (*corev1.Probe, error) {
	out := &corev1.Probe{}
	n := 0
	if h := in.HTTP; h != nil {
		n++
		port := h.Port
		if port == 0 {
			port = defaultProbePort(ports)
		}
		if port == 0 {
			return nil, fmt.Errorf("http: no port, and the container declares no TCP port")
		}
		get := &corev1.HTTPGetAction{Path: h.Path, Port: intstr.FromInt32(int32(port))}
		if h.Scheme == "HTTPS" {
			get.Scheme = corev1.URISchemeHTTPS
		}
		for _, k := range slices.Sorted(maps.Keys(h.Headers)) {
			get.HTTPHeaders = append(get.HTTPHeaders, corev1.HTTPHeader{Name: k, Value: h.Headers[k]})
		}
		out.HTTPGet = get
	}
	if g := in.GRPC; g != nil {
		n++
		out.GRPC = &corev1.GRPCAction{Port: int32(g.Port)}
		if g.Service != "" {
			out.GRPC.Service = new(g.Service)
		}
	}
	if t := in.TCP; t != nil {
		n++
		out.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(t.Port))}
	}
	if e := in.Exec; e != nil {
		n++
		out.Exec = &corev1.ExecAction{Command: e.Command}
	}
	if n != 1 {
		return nil, fmt.Errorf("set exactly one of http, grpc, tcp and exec (%d set)", n)
	}
	deref := func(p *int32) int32 {
		if p == nil {
			return 0
		}
		return *p
	}
	out.InitialDelaySeconds = deref(in.InitialDelaySeconds)
	out.PeriodSeconds = deref(in.PeriodSeconds)
	out.TimeoutSeconds = deref(in.TimeoutSeconds)
	out.FailureThreshold = deref(in.FailureThreshold)
	out.SuccessThreshold = deref(in.SuccessThreshold)
	return out, nil
}

// defaultProbePort is the port of an http probe that names none: the first
// exposed TCP port, else the first TCP port.
func defaultProbePort(ports []spec.Port) int {
	first := 0
	for _, p := range ports {
		if p.Protocol != "" && p.Protocol != spec.ProtocolTCP {
			continue
		}
		if p.Expose == nil || *p.Expose {
			return p.Port
		}
		if first == 0 {
			first = p.Port
		}
	}
	return first
}

func envFrom(in []spec.EnvFrom) []corev1.EnvFromSource {
	var out []corev1.EnvFromSource
	for _, e := range in {
		s := corev1.EnvFromSource{Prefix: e.Prefix}
		if e.ConfigMap != "" {
			s.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: e.ConfigMap}, Optional: optional(e.Optional)}
		}
		if e.Secret != "" {
			s.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: e.Secret}, Optional: optional(e.Optional)}
		}
		out = append(out, s)
	}
	return out
}

func optional(b bool) *bool {
	if !b {
		return nil
	}
	return new(true)
}

func keyPaths(in []spec.KeyPath) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, k := range in {
		out = append(out, corev1.KeyToPath{Key: k.Key, Path: k.Path})
	}
	return out
}

func claimTemplate(v spec.Volume) (corev1.PersistentVolumeClaim, error) {
	q, err := resource.ParseQuantity(v.Size.String())
	if err != nil {
		return corev1.PersistentVolumeClaim{}, fmt.Errorf("volume %s: size: %w", v.Name, err)
	}
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	if len(v.AccessModes) > 0 {
		modes = modes[:0]
		for _, m := range v.AccessModes {
			modes = append(modes, corev1.PersistentVolumeAccessMode(m))
		}
	}
	claim := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: v.Name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: modes,
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}},
		},
	}
	if v.StorageClass != "" {
		claim.Spec.StorageClassName = new(v.StorageClass)
	}
	return claim, nil
}

// sharedClaim builds the PersistentVolumeClaim of an app-wide volume. A
// claim the volume retains (the default) carries Flux's prune annotation,
// so that it stays when the volume, its owner or the app leaves the fleet.
func sharedClaim(a *load.LoadedApp, v *spec.AppVolume, lbls map[string]string) (*corev1.PersistentVolumeClaim, error) {
	claim, err := claimTemplate(spec.Volume{Name: spec.SharedClaimName(a.Spec.Name, v.Name), Size: v.Size, AccessModes: v.AccessModes, StorageClass: v.StorageClass})
	if err != nil {
		return nil, err
	}
	claim.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
	claim.Namespace = a.Project
	claim.Labels = lbls
	if v.RetainShared() {
		claim.Annotations = map[string]string{layout.PruneAnnotation: layout.PruneDisabled}
	}
	return &claim, nil
}

// files builds the ConfigMap of a component's files, its checksum, the
// mounts (each file on its own path, read-only, by subPath) and the items
// of the volume (carrying each file's mode).
func files(a *load.LoadedApp, c *spec.Component, lbls map[string]string, fs []spec.File) (*corev1.ConfigMap, string, []corev1.VolumeMount, []corev1.KeyToPath, error) {
	keys := fileKeys(fs)
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: FilesConfigMapName(a.Spec.Name, c.Name), Namespace: a.Project, Labels: lbls},
	}
	h := sha256.New()
	var mounts []corev1.VolumeMount
	var items []corev1.KeyToPath
	for i, f := range fs {
		if f.Content == nil {
			return nil, "", nil, nil, fmt.Errorf("files[%d] %s: no content (a from file must be read by the loader)", i, f.Path)
		}
		content := *f.Content
		if utf8.ValidString(content) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[keys[i]] = content
		} else {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[keys[i]] = []byte(content)
		}
		mode := "-"
		if f.Mode != nil {
			mode = strconv.Itoa(int(*f.Mode))
		}
		for _, s := range []string{f.Path, keys[i], mode, content} {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
		mounts = append(mounts, corev1.VolumeMount{Name: filesVolume, MountPath: f.Path, SubPath: keys[i], ReadOnly: true})
		items = append(items, corev1.KeyToPath{Key: keys[i], Path: keys[i], Mode: f.Mode})
	}
	return cm, hex.EncodeToString(h.Sum(nil)), mounts, items, nil
}

// fileKeys derives a ConfigMap key from each file's path: the path without
// its leading slash, '/' as '_' and any other character a key may not hold
// as '-'. Paths that would share a key, or keys too long, get a hash of the
// path appended, so each key stays unique and stable.
func fileKeys(fs []spec.File) []string {
	keys := make([]string, len(fs))
	count := map[string]int{}
	for i, f := range fs {
		var b strings.Builder
		for _, r := range strings.TrimLeft(f.Path, "/") {
			switch {
			case r == '/':
				b.WriteByte('_')
			case r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			default:
				b.WriteByte('-')
			}
		}
		keys[i] = b.String()
		count[keys[i]]++
	}
	for i, f := range fs {
		k := keys[i]
		if count[k] == 1 && len(k) <= 253 && k != "." && k != ".." && k != "" {
			continue
		}
		sum := sha256.Sum256([]byte(f.Path))
		if len(k) > 236 {
			k = k[len(k)-236:]
		}
		keys[i] = k + "-" + hex.EncodeToString(sum[:8])
	}
	return keys
}

// securityContext merges a container's settings over the defaults of its
// project (spec.Platform.DefaultsFor), field by field (capabilities' drop
// and add each on their own).
func (r *renderer) securityContext(project string, sc *spec.SecurityContext) *spec.SecurityContext {
	var def *spec.SecurityContext
	if d := r.opts.Platform.DefaultsFor(project); d != nil {
		def = d.SecurityContext
	}
	if sc == nil {
		return def
	}
	if def == nil {
		return sc
	}
	out := *def
	pick := func(dst **bool, src *bool) {
		if src != nil {
			*dst = src
		}
	}
	pickInt := func(dst **int64, src *int64) {
		if src != nil {
			*dst = src
		}
	}
	pick(&out.RunAsNonRoot, sc.RunAsNonRoot)
	pick(&out.ReadOnlyRootFilesystem, sc.ReadOnlyRootFilesystem)
	pick(&out.AllowPrivilegeEscalation, sc.AllowPrivilegeEscalation)
	pickInt(&out.RunAsUser, sc.RunAsUser)
	pickInt(&out.RunAsGroup, sc.RunAsGroup)
	pickInt(&out.FSGroup, sc.FSGroup)
	if sc.SeccompProfile != "" {
		out.SeccompProfile = sc.SeccompProfile
	}
	if sc.Capabilities != nil {
		caps := spec.Capabilities{}
		if def.Capabilities != nil {
			caps = *def.Capabilities
		}
		if sc.Capabilities.Drop != nil {
			caps.Drop = sc.Capabilities.Drop
		}
		if sc.Capabilities.Add != nil {
			caps.Add = sc.Capabilities.Add
		}
		out.Capabilities = &caps
	}
	return &out
}

// podSecurity holds the workload container's pod-wide settings.
func podSecurity(sc *spec.SecurityContext) *corev1.PodSecurityContext {
	if sc == nil || sc.RunAsNonRoot == nil && sc.RunAsUser == nil && sc.RunAsGroup == nil && sc.FSGroup == nil && sc.SeccompProfile == "" {
		return nil
	}
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   sc.RunAsNonRoot,
		RunAsUser:      sc.RunAsUser,
		RunAsGroup:     sc.RunAsGroup,
		FSGroup:        sc.FSGroup,
		SeccompProfile: seccomp(sc.SeccompProfile),
	}
}

// containerSecurity holds what only a container can say, and the pod-wide
// settings where this container's differ from the pod's.
func containerSecurity(sc *spec.SecurityContext, pod *corev1.PodSecurityContext) *corev1.SecurityContext {
	if sc == nil {
		return nil
	}
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	out := &corev1.SecurityContext{
		ReadOnlyRootFilesystem:   sc.ReadOnlyRootFilesystem,
		AllowPrivilegeEscalation: sc.AllowPrivilegeEscalation,
	}
	if !eqBool(sc.RunAsNonRoot, pod.RunAsNonRoot) {
		out.RunAsNonRoot = sc.RunAsNonRoot
	}
	if !eqInt(sc.RunAsUser, pod.RunAsUser) {
		out.RunAsUser = sc.RunAsUser
	}
	if !eqInt(sc.RunAsGroup, pod.RunAsGroup) {
		out.RunAsGroup = sc.RunAsGroup
	}
	if p := seccomp(sc.SeccompProfile); p != nil && (pod.SeccompProfile == nil || pod.SeccompProfile.Type != p.Type || !eqStr(pod.SeccompProfile.LocalhostProfile, p.LocalhostProfile)) {
		out.SeccompProfile = p
	}
	if caps := sc.Capabilities; caps != nil && (len(caps.Add) > 0 || len(caps.Drop) > 0) {
		out.Capabilities = &corev1.Capabilities{}
		for _, c := range caps.Add {
			out.Capabilities.Add = append(out.Capabilities.Add, corev1.Capability(c))
		}
		for _, c := range caps.Drop {
			out.Capabilities.Drop = append(out.Capabilities.Drop, corev1.Capability(c))
		}
	}
	if *out == (corev1.SecurityContext{}) {
		return nil
	}
	return out
}

func seccomp(s string) *corev1.SeccompProfile {
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "Localhost/"):
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: new(strings.TrimPrefix(s, "Localhost/"))}
	}
	return &corev1.SeccompProfile{Type: corev1.SeccompProfileType(s)}
}

func eqBool(a, b *bool) bool  { return a == nil && b == nil || a != nil && b != nil && *a == *b }
func eqInt(a, b *int64) bool  { return a == nil && b == nil || a != nil && b != nil && *a == *b }
func eqStr(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// PodSecurityLabels are the Pod Security Admission labels of a project
// namespace for the platform's policy.pod_security level: enforced, and
// warned and audited at the same level.
func PodSecurityLabels(level string) map[string]string {
	if level == "" {
		return nil
	}
	const p = "pod-security.kubernetes.io/"
	return map[string]string{p + "enforce": level, p + "warn": level, p + "audit": level}
}

// namespaceLabels adds the Pod Security labels of the project's level
// (spec.Platform.PodSecurityFor) to a project namespace's labels.
func (r *renderer) namespaceLabels(project string, lbls map[string]string) map[string]string {
	level := r.opts.Platform.PodSecurityFor(project)
	if level == "" {
		return lbls
	}
	out := PodSecurityLabels(level)
	maps.Copy(out, lbls)
	return out
}
