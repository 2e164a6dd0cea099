package generate

import (
	"path"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/spec"
)

// eventAnnotations let Flux events name the app they are about: Flux copies
// event.toolkit.fluxcd.io/* annotations into each event's metadata.
func (r *renderer) eventAnnotations(a *spec.LoadedApp, component string) map[string]string {
	m := map[string]string{
		EventPrefix + "app":       a.Spec.Name,
		EventPrefix + "project":   a.Project,
		EventPrefix + "component": component,
	}
	if r.opts.SpecRevision != nil {
		if rev := r.opts.SpecRevision(a); rev != "" {
			m[EventPrefix+"spec-revision"] = rev
			m[AnnoSpecRevision] = rev
		}
	}
	return m
}

func (r *renderer) fleetPath(p string) string {
	return "./" + path.Join(r.opts.FleetPath, p)
}

func (r *renderer) fluxKustomization(a *spec.LoadedApp, c *spec.Component) *kustomizev1.Kustomization {
	plat := r.opts.Platform
	deps := []meta.DependencyReference{{Name: projectKustomizationName(a.Project)}}
	for _, id := range r.repo.Graph.Deps(spec.NodeID(a, c.Name)) {
		// id is cluster/project/app/component
		parts := splitID(id)
		deps = append(deps, meta.DependencyReference{Name: KustomizationName(parts[1], parts[2], parts[3])})
	}
	k := &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        KustomizationName(a.Project, a.Spec.Name, c.Name),
			Namespace:   plat.Fleet.SourceNamespace,
			Labels:      labels(a, c.Name),
			Annotations: r.eventAnnotations(a, c.Name),
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
			SourceRef:       kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: plat.Fleet.SourceName},
		},
	}
	r.tenancy(a.Cluster, &k.Spec, true)
	return k
}

// tenancy applies the cluster's isolation settings. Projects are applied
// without the tenant service account: creating a namespace is the
// platform's job.
func (r *renderer) tenancy(cluster string, s *kustomizev1.KustomizationSpec, tenant bool) {
	cl := r.opts.Platform.ClusterByName(cluster)
	if cl == nil {
		return
	}
	if tenant {
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

// project renders a project's Namespace and the Flux Kustomization that
// applies it; every component of the project's apps depends on it.
func (r *renderer) project(cluster, project string) ([]File, error) {
	plat := r.opts.Platform
	lbls := map[string]string{LabelProject: project, LabelManagedBy: ManagedBy}
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: project, Labels: r.namespaceLabels(lbls)},
	}
	dir := layout.ProjectDir(cluster, project)
	nsData, err := encode(ns)
	if err != nil {
		return nil, err
	}
	kz, err := encode(kustomizeFile([]string{layout.ObjectFile("Namespace", project)}))
	if err != nil {
		return nil, err
	}
	k := &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization"},
		ObjectMeta: metav1.ObjectMeta{
			Name: projectKustomizationName(project), Namespace: plat.Fleet.SourceNamespace, Labels: lbls,
			Annotations: map[string]string{EventPrefix + "project": project},
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
	r.tenancy(cluster, &k.Spec, false)
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
