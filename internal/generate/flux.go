package generate

import (
	"hash/fnv"
	"path"
	"slices"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// eventAnnotations let Flux events name the app they are about: Flux copies
// event.toolkit.fluxcd.io/* annotations into each event's metadata. The
// Flux objects of the app's file (its Kustomizations and OCIRepositories)
// also name the spec commit rendered (see componentEventAnnotations).
func (r *renderer) eventAnnotations(a *load.LoadedApp, component string) map[string]string {
	m := componentEventAnnotations(a, component)
	if r.opts.SpecRevision != nil {
		if rev := r.opts.SpecRevision(a); rev != "" {
			m[layout.EventAnnotationPrefix+layout.EventSpecRevision] = rev
			m[layout.AnnotationSpecRevision] = rev
		}
	}
	return m
}

// componentEventAnnotations name the app and component of an object in a
// component's folder (a HelmRelease). They leave out the spec revision:
// that changes with every commit to the app's spec, and on an object of the
// folder it would change the component's files, and with fleet.artifacts
// its artifact, so that Flux would reconcile the component on commits that
// change another. The webhook takes the spec revision from the component's
// Kustomization instead.
//
// With platform environments, they name the app's environment as well
// (the event's metadata key environment), so that the webhook records
// where a deployment ran.
func componentEventAnnotations(a *load.LoadedApp, component string) map[string]string {
	m := map[string]string{
		layout.EventAnnotationPrefix + layout.EventApp:       a.Spec.Name,
		layout.EventAnnotationPrefix + layout.EventProject:   a.ProjectName(),
		layout.EventAnnotationPrefix + layout.EventComponent: component,
	}
	if a.Environment != "" {
		m[layout.EventAnnotationPrefix+layout.EventEnvironment] = a.Environment
	}
	return m
}

// fluxFinalizers is the finalizer Flux's controllers add to each of their
// objects (Kustomization, OCIRepository, HelmRelease: one name for all
// three) before they reconcile it. Written into the objects render
// generates, a new object starts with it: its controller's first reconcile
// does the work instead of patching the finalizer in and queueing the
// object again: one request and one reconcile fewer per Flux object (5–6 %
// of the API requests of a first deploy of 500 apps, and 41 % of
// kustomize-controller's reconciles; docs/fleet.md). The controllers remove
// it only when the object is deleted, after their cleanup, as they do the
// one they add; a HelmRepository is left without it, because
// source-controller removes it from one of type oci.
func fluxFinalizers() []string { return []string{kustomizev1.KustomizationFinalizer} }

func (r *renderer) fleetPath(p string) string {
	return "./" + path.Join(r.opts.FleetPath, p)
}

func (r *renderer) fluxKustomization(a *load.LoadedApp, c *spec.Component) *kustomizev1.Kustomization {
	ns := r.appNamespace(a)
	var deps []meta.DependencyReference
	if r.projectKustomization(a.Cluster) {
		deps = append(deps, meta.DependencyReference{Name: projectKustomizationName(a.Project)})
	}
	for _, name := range r.readinessDeps(a, c) {
		deps = append(deps, meta.DependencyReference{Name: name})
	}
	k := &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        KustomizationName(a.Project, a.Spec.Name, c.Name),
			Namespace:   ns,
			Labels:      r.fluxLabels(a, c.Name),
			Annotations: r.eventAnnotations(a, c.Name),
			Finalizers:  fluxFinalizers(),
		},
		Spec: kustomizev1.KustomizationSpec{
			DependsOn:       deps,
			Interval:        metav1.Duration{Duration: 10 * time.Minute},
			RetryInterval:   &metav1.Duration{Duration: time.Minute},
			Path:            r.fleetPath(layout.ComponentDir(a.Cluster, a.Project, a.Spec.Name, c.Name)),
			Prune:           true,
			Wait:            true,
			Timeout:         &metav1.Duration{Duration: a.Timeout},
			TargetNamespace: a.Project,
			SourceRef:       r.fleetSource(ns),
		},
	}
	r.tenancy(a.Cluster, &k.Spec, true, !r.inFluxNamespace(a))
	if r.inFluxNamespace(a) {
		k.Spec.Prune = false // the move's first step (see tenancy.go)
	}
	return k
}

// appNamespace is the namespace of a's Flux objects: its project's, or,
// before the move, the Flux namespace (see tenancy.go).
func (r *renderer) appNamespace(a *load.LoadedApp) string {
	if r.inFluxNamespace(a) {
		return r.opts.Platform.Fleet.SourceNamespace
	}
	return r.fluxNamespace(a.Cluster, a.Project)
}

// fleetSource is the reference to the fleet's GitRepository of a
// Kustomization in namespace ns: across namespaces from a project's (which
// Flux's --no-cross-namespace-refs refuses: with the lockdown, fleets use
// fleet.artifacts, whose sources live in the project's namespace).
func (r *renderer) fleetSource(ns string) kustomizev1.CrossNamespaceSourceReference {
	f := r.opts.Platform.Fleet
	ref := kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: f.SourceName}
	if ns != f.SourceNamespace {
		ref.Namespace = f.SourceNamespace
	}
	return ref
}

// readinessDeps names the Kustomizations that must be Ready before the
// component is applied: those of the components it depends_on, those of
// the components whose Secret it reads through an export (a chart creates
// the Secret when it is installed), and, for a job, those of every
// component it reads an export of. For any other component an export
// known at render time (a workload's URL, an addon's host) is a literal in
// its objects and orders nothing: every dependsOn costs Flux a retry
// (--requeue-dependency, 30s by default) and makes the dependent wait for
// its dependency to apply every new fleet commit. Sorted, without
// duplicates.
func (r *renderer) readinessDeps(a *load.LoadedApp, c *spec.Component) []string {
	var names []string
	for _, d := range c.DependsOn {
		if a.Component(d) != nil && d != c.Name {
			names = append(names, KustomizationName(a.Project, a.Spec.Name, d))
		}
	}
	if c.WorkloadSpec != nil {
		for _, ref := range exportRefs(&a.Spec, c.WorkloadSpec) {
			if ref.Component == "" || ref.AddonInstanceID != "" {
				continue
			}
			target := a
			if ref.App != "" && ref.App != a.Spec.Name {
				if target = r.apps[a.App().Sibling(ref.App).Key()]; target == nil {
					continue // validation reports it
				}
			}
			if target.Component(ref.Component) == nil || (target == a && ref.Component == c.Name) {
				continue
			}
			// A job runs once and fails after its retries: it waits for
			// whatever it reads from, even an address known at render time.
			if c.Type != spec.TypeJob {
				if exp, _, err := r.resolve(a, c, ref); err == nil && !readsSecret(exp) {
					continue
				}
			}
			names = append(names, KustomizationName(target.Project, target.Spec.Name, ref.Component))
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// exportRefs returns the export_refs of a workload's containers: its own
// (with those it inherits from the app's env), its init containers' and
// its sidecars'.
func exportRefs(s *spec.App, w *spec.WorkloadSpec) []*spec.ExportRef {
	var out []*spec.ExportRef
	add := func(env []spec.EnvVar) {
		for i := range env {
			if env[i].ExportRef != nil {
				out = append(out, env[i].ExportRef)
			}
		}
	}
	add(s.WorkloadEnv(w))
	for i := range w.InitContainers {
		add(w.InitContainers[i].Env)
	}
	for i := range w.Sidecars {
		add(w.Sidecars[i].Env)
	}
	return out
}

// readsSecret reports whether a consumer of the export reads a Secret.
func readsSecret(e exports.Export) bool {
	switch e.Kind {
	case exports.Secret:
		return true
	case exports.Composed:
		for _, p := range e.Parts {
			if p.Secret != nil {
				return true
			}
		}
	}
	return false
}

// fluxLabels are the labels of an app's Flux Kustomizations: the app's,
// and the shard of the cluster's kustomize-controllers that reconciles it
// when the cluster lists shards.
func (r *renderer) fluxLabels(a *load.LoadedApp, component string) map[string]string {
	l := labels(a, component)
	if cl := r.opts.Platform.ClusterByName(a.Cluster); cl != nil && len(cl.Shards) > 0 {
		l[layout.LabelShard] = Shard(cl.Shards, a.App().AppRef)
	}
	return l
}

// Shard picks the shard of an app: a hash of its project and name (its
// Ref), so that apps spread evenly and an app's shard changes only when
// the list does. Every Kustomization of an app goes to the same shard.
func Shard(shards []string, app layout.AppRef) string {
	h := fnv.New32a()
	h.Write([]byte(app.Ref()))
	return shards[h.Sum32()%uint32(len(shards))]
}

// projectKustomization reports whether a project's Namespace is applied
// by a Flux Kustomization of its own, which the project's components
// depend on: for a cluster Flux reaches through a kubeconfig, where the
// cluster's root Kustomization (which runs against the cluster Flux runs
// in) cannot create it. Elsewhere the root Kustomization applies the
// Namespace from the project's file in the cluster folder, before the
// apps' Kustomizations (Flux applies Namespaces first), and the apps need
// no dependsOn level for it.
func (r *renderer) projectKustomization(cluster string) bool {
	cl := r.opts.Platform.ClusterByName(cluster)
	return cl != nil && cl.KubeconfigSecret != nil
}

// tenancy applies the cluster's isolation settings to a Kustomization:
// the account it runs as, and the kubeconfig of a cluster Flux reaches
// through one. tenant says whether it applies a project's objects (an
// app's component, a project's Flux files): on a cluster Flux runs in,
// those run as the project's service account (see tenancy.go), except an
// app's before the move, which runs as it did, as the cluster's
// service_account; on a cluster reached through a kubeconfig, as the
// cluster's service_account. A project's Namespace is applied as Flux
// itself: creating a namespace is the platform's job.
func (r *renderer) tenancy(cluster string, s *kustomizev1.KustomizationSpec, tenant, moved bool) {
	cl := r.opts.Platform.ClusterByName(cluster)
	if cl == nil {
		if tenant && moved {
			s.ServiceAccountName = layout.ProjectServiceAccount
		}
		return
	}
	switch {
	case !tenant:
	case cl.KubeconfigSecret == nil && moved:
		s.ServiceAccountName = layout.ProjectServiceAccount
	default:
		s.ServiceAccountName = cl.ServiceAccount
	}
	if cl.KubeconfigSecret != nil {
		s.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: cl.KubeconfigSecret.Name, Key: cl.KubeconfigSecret.Key}}
	}
}

func splitID(id string) [4]string {
	var out [4]string
	i := 0
	start := 0
	for j := 0; j < len(id) && i < 3; j++ {
		if id[j] == '/' {
			out[i] = id[start:j]
			i++
			start = j + 1
		}
	}
	out[3] = id[start:]
	return out
}

func kustomizeFile(resources []string) map[string]any {
	res := make([]any, len(resources))
	for i, r := range resources {
		res[i] = r
	}
	return map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  res,
	}
}

// projectLabels are the labels of a project's own objects.
func projectLabels(project string) map[string]string {
	return map[string]string{layout.LabelProject: project, layout.LabelManagedBy: layout.ManagedBy}
}

// projectEventAnnotations are the event annotations of a project's own
// Flux objects: its project, and for a pull request's preview namespace
// the project it belongs to and the preview's environment.
func (r *renderer) projectEventAnnotations(project string) map[string]string {
	m := map[string]string{layout.EventAnnotationPrefix + layout.EventProject: project}
	if a, ok := r.previews[project]; ok {
		m[layout.EventAnnotationPrefix+layout.EventProject] = a.PreviewProject
		m[layout.EventAnnotationPrefix+layout.EventEnvironment] = a.Environment
	}
	return m
}

// projectLabels are the labels of a project's own objects; those of a
// pull request's preview namespace name the project it belongs to and
// the preview's environment.
func (r *renderer) projectLabels(project string) map[string]string {
	l := projectLabels(project)
	if a, ok := r.previews[project]; ok {
		l[layout.LabelProject] = a.PreviewProject
		l[layout.LabelEnvironment] = a.Environment
	}
	return l
}

// namespace is the project's Namespace, with the pod security labels of
// the platform's policy.
func (r *renderer) namespace(project string, annotations map[string]string) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: project, Labels: r.namespaceLabels(project, r.projectLabels(project)), Annotations: annotations},
	}
}

// project renders a project's Namespace, in the project's file in the
// cluster folder (applied by the cluster's root Kustomization) with the
// project's service account and its RoleBinding (see tenancy.go), or, for a
// cluster reached through a kubeconfig, in its own folder with the Flux
// Kustomization that applies it (see projectKustomization). With art, the
// artifact of the project's Flux files, the project's file also holds the
// source and the Kustomization that apply them (see projectSource).
func (r *renderer) project(cluster, project string, art *artifact.Artifact) ([]File, error) {
	plat := r.opts.Platform
	lbls := r.projectLabels(project)
	nsData, err := encode(r.namespace(project, nil))
	if err != nil {
		return nil, err
	}
	if !r.projectKustomization(cluster) {
		objs := append(projectAccount(project, lbls), projectAlert(plat, project, lbls)...)
		if art != nil {
			objs = append(objs, r.projectSource(cluster, project, art)...)
		}
		rest, err := manifest.Document(objs...)
		if err != nil {
			return nil, err
		}
		nsData = append(append(nsData, "---\n"...), rest...)
		return []File{{Path: layout.ProjectFile(plat, cluster, project), Data: nsData}}, nil
	}
	dir := layout.ProjectDir(cluster, project)
	kz, err := encode(kustomizeFile([]string{layout.ObjectFile("Namespace", project)}))
	if err != nil {
		return nil, err
	}
	k := &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization"},
		ObjectMeta: metav1.ObjectMeta{
			Name: projectKustomizationName(project), Namespace: plat.Fleet.SourceNamespace, Labels: lbls,
			Annotations: r.projectEventAnnotations(project),
			Finalizers:  fluxFinalizers(),
		},
		Spec: kustomizev1.KustomizationSpec{
			Interval:      metav1.Duration{Duration: 10 * time.Minute},
			RetryInterval: &metav1.Duration{Duration: time.Minute},
			Path:          r.fleetPath(dir),
			Prune:         true,
			Wait:          true,
			Timeout:       &metav1.Duration{Duration: 2 * time.Minute},
			SourceRef:     kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: plat.Fleet.SourceName},
		},
	}
	r.tenancy(cluster, &k.Spec, false, false)
	kData, err := encode(k)
	if err != nil {
		return nil, err
	}
	return []File{
		{Path: path.Join(dir, layout.ObjectFile("Namespace", project)), Data: nsData},
		{Path: path.Join(dir, layout.Kustomization), Data: kz},
		{Path: layout.ProjectFile(plat, cluster, project), Data: kData},
	}, nil
}
