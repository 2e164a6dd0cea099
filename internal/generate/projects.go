package generate

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// A source per project. With fleet.artifacts, each component reads an
// OCIRepository of its own, but the cluster's root Kustomization would
// still apply every app's OCIRepositories and Kustomizations on every
// fleet commit: a server-side dry run of each, the whole fleet's worth,
// whatever the commit changed. On a cluster Flux runs in, an app's Flux
// objects go instead into its project's folder of Flux files
// (layout.FluxDir), packed as the project's artifact; the project's file
// in the cluster folder holds the project's Namespace, an OCIRepository
// pinned to that artifact's digest, and a Kustomization (project-<name>)
// that applies it. A commit that changes one component then costs the
// root the project's few objects, the project's Kustomization its apps'
// Flux objects, and the component its own.

// placement is where an app's Flux objects go.
type placement int

const (
	// placeCluster: the app's file in the cluster folder, which the root
	// Kustomization applies (no source per project for its cluster).
	placeCluster placement = iota
	// placeProject: the app's file in its project's Flux folder.
	placeProject
	// placePrepare: the app's file stays in the cluster folder, its
	// objects marked layout.PruneAnnotation: disabled, because the root
	// Kustomization applied them from there: moving them at once would
	// make the root prune them (and their workloads with them) before the
	// project's Kustomization takes them over. Once Flux has applied this,
	// the next render moves them (placeMove).
	placePrepare
	// placeMove: the app's file moves to its project's Flux folder; the
	// cluster folder's copy, which Flux has marked as not to be pruned, is
	// deleted.
	placeMove
)

// projectSources reports whether the apps of cluster get a source per
// project: with fleet.artifacts, on a cluster Flux runs in (a cluster
// reached through a kubeconfig applies its Namespaces through a
// Kustomization of their own and keeps its apps' files in the cluster
// folder).
func (r *renderer) projectSources(cluster string) bool {
	return r.opts.Platform.Fleet.Artifacts != nil && !r.projectKustomization(cluster)
}

// placement decides where the Flux objects of a go, from the fleet as it
// is (Options.Previous).
func (r *renderer) placement(a *load.LoadedApp) placement {
	if !r.projectSources(a.Cluster) {
		return placeCluster
	}
	if r.opts.Previous == nil {
		return placeProject
	}
	old, ok := r.opts.Previous(layout.AppFile(r.opts.Platform, a.Cluster, a.Project, a.Spec.Name))
	if !ok || !bytes.HasPrefix(old, []byte(manifest.Header)) {
		return placeProject
	}
	if pruneDisabledOnAll(old) {
		return placeMove
	}
	return placePrepare
}

// pruneDisabledOnAll reports whether every object of a generated Flux file
// carries the mark, its text holding layout.PruneDisabledLine.
func pruneDisabledOnAll(data []byte) bool {
	objects := 0
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		if !strings.Contains(doc, "\nkind: ") && !strings.HasPrefix(doc, "kind: ") {
			continue
		}
		objects++
		if !strings.Contains(doc, layout.PruneDisabledLine) {
			return false
		}
	}
	return objects > 0
}

// appFluxFile is the path of the file of a's Flux objects for p.
func (r *renderer) appFluxFile(a *load.LoadedApp, p placement) string {
	if p == placeProject || p == placeMove {
		return layout.AppFluxFile(a.Cluster, a.Project, a.Spec.Name)
	}
	return layout.AppFile(r.opts.Platform, a.Cluster, a.Project, a.Spec.Name)
}

// keepFromPrune marks Flux objects layout.PruneAnnotation: disabled.
func keepFromPrune(objs []any) {
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok {
			annos := m.GetAnnotations()
			if annos == nil {
				annos = map[string]string{}
			}
			annos[layout.PruneAnnotation] = layout.PruneDisabled
			m.SetAnnotations(annos)
		}
	}
}

// projectArtifact packs the Flux files of a project's apps, the generated
// ones (in files) and those of apps reused (read with Options.Previous),
// as the project's artifact; nil when no app of the project has its file
// there.
func (r *renderer) projectArtifact(cluster, project string, generated map[string][]artifact.File, reused []string) (*artifact.Artifact, error) {
	dir := layout.FluxDir(cluster, project)
	in := slices.Clone(generated[dir])
	for _, key := range reused {
		a := r.apps[key]
		if a == nil || a.Cluster != cluster || a.Project != project {
			continue
		}
		p := layout.AppFluxFile(cluster, project, a.Spec.Name)
		var data []byte
		ok := false
		if r.opts.Previous != nil {
			data, ok = r.opts.Previous(p)
		}
		if !ok {
			return nil, fmt.Errorf("app %s was kept as it is, but its Flux file %s cannot be read", key, p)
		}
		in = append(in, artifact.File{Name: path.Base(p), Data: data})
	}
	if len(in) == 0 {
		return nil, nil
	}
	slices.SortFunc(in, func(a, b artifact.File) int { return strings.Compare(a.Name, b.Name) })
	return artifact.Build(path.Join(r.opts.Prefix, dir), in)
}

// fluxFiles groups the files of the projects' Flux folders by folder.
func fluxFiles(files []File) map[string][]artifact.File {
	m := map[string][]artifact.File{}
	for _, f := range files {
		if dir := layout.FluxDirOf(f.Path); dir != "" {
			m[dir] = append(m[dir], artifact.File{Name: path.Base(f.Path), Data: f.Data})
		}
	}
	return m
}

// projectSource is the OCIRepository and Kustomization that apply a
// project's Flux files from its artifact. The Kustomization prunes (an app
// removed from the project is removed from the cluster) and does not wait:
// each component's Kustomization checks its own health, and the webhook
// reports it.
func (r *renderer) projectSource(cluster, project string, art *artifact.Artifact) []any {
	plat := r.opts.Platform
	name := projectKustomizationName(project)
	lbls := r.projectLabels(project)
	annos := r.projectEventAnnotations(project)
	ns := project
	if r.stayedProjects[[2]string{cluster, project}] {
		ns = plat.Fleet.SourceNamespace // before the move (see tenancy.go)
	}
	src := r.ociRepository(ns, name, lbls, annos, layout.FluxDir(cluster, project), art.Digest.String())
	k := &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Labels: lbls,
			Annotations: r.projectEventAnnotations(project),
			Finalizers:  fluxFinalizers(),
		},
		Spec: kustomizev1.KustomizationSpec{
			Interval:      metav1.Duration{Duration: 10 * time.Minute},
			RetryInterval: &metav1.Duration{Duration: time.Minute},
			Path:          "./",
			Prune:         true,
			Timeout:       &metav1.Duration{Duration: 2 * time.Minute},
			SourceRef:     kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: name},
		},
	}
	if ns == project {
		k.Spec.ServiceAccountName = layout.ProjectServiceAccount
	}
	return []any{src, k}
}
