// Package fleettest renders fleets with generate.Render and puts an app's
// Flux objects, as a fleet commit holds them, into a test API server the
// way Flux would have applied them. The tests of the sync check
// (internal/probe) and of the webhook (internal/webhook) build their
// clusters from it, so that they follow the layout render writes.
package fleettest

import (
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// kustomize-controller's owner labels (layout.AppliedByNameLabel and
// …Namespace; this package cannot import probe, whose tests import it).
const (
	labelAppliedByName      = "kustomize.toolkit.fluxcd.io/name"
	labelAppliedByNamespace = "kustomize.toolkit.fluxcd.io/namespace"
)

// Fleet is one render of a fleet.
type Fleet struct {
	Repo  *load.Repo
	Fleet *generate.Fleet
	Files map[string][]byte
}

// Render loads the spec files (platform.yaml and apps/…/app.yaml) and
// renders them; previous is the fleet as it was before (nil: none), as
// cmd/render passes it, and specRevision the apps-repo commit every app's Flux
// objects name (none when "").
func Render(t testing.TB, files, previous map[string][]byte, specRevision string) *Fleet {
	t.Helper()
	repo := spectest.LoadFiles(t, files)
	opts := generate.Options{Workers: 1}
	if specRevision != "" {
		opts.SpecRevision = func(*load.LoadedApp) string { return specRevision }
	}
	if previous != nil {
		opts.Previous = generate.FileIn(previous)
	}
	f, err := generate.Render(repo, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &Fleet{Repo: repo, Fleet: f, Files: f.Map()}
}

// Objects are the Flux objects a fleet commit holds for one app of a
// cluster: its project's source and Kustomization (nil without a source
// per project), and the app's OCIRepositories and Kustomizations, by name.
type Objects struct {
	ProjectSource  *sourcev1.OCIRepository
	Project        *kustomizev1.Kustomization
	Sources        map[string]*sourcev1.OCIRepository
	Kustomizations map[string]*kustomizev1.Kustomization
	// InProject: the app's file is in its project's Flux folder
	// (layout.AppFluxFile), applied by Project; otherwise it is in the
	// cluster folder (layout.AppFile), applied by the root.
	InProject bool
}

// App returns the Flux objects of an app, read from whichever file the
// fleet holds them in: its project's Flux folder or the cluster folder.
func (f *Fleet) App(t testing.TB, cluster, project, app string) Objects {
	t.Helper()
	o := Objects{Sources: map[string]*sourcev1.OCIRepository{}, Kustomizations: map[string]*kustomizev1.Kustomization{}}
	file := layout.AppFluxFile(cluster, project, app)
	data, ok := f.Files[file]
	o.InProject = ok
	if !ok {
		file = layout.AppFile(&f.Repo.Platform, cluster, project, app)
		if data, ok = f.Files[file]; !ok {
			t.Fatalf("the fleet holds no Flux file of %s/%s/%s", cluster, project, app)
		}
	}
	decode(t, file, data, o.Sources, o.Kustomizations)
	projectFile := layout.ProjectFile(&f.Repo.Platform, cluster, project)
	srcs, ks := map[string]*sourcev1.OCIRepository{}, map[string]*kustomizev1.Kustomization{}
	decode(t, projectFile, f.Files[projectFile], srcs, ks)
	o.ProjectSource, o.Project = srcs[layout.ProjectFluxName(project)], ks[layout.ProjectFluxName(project)]
	if o.InProject && (o.ProjectSource == nil || o.Project == nil) {
		t.Fatalf("%s is in the project's Flux folder, but %s holds no source of the project", file, projectFile)
	}
	return o
}

// decode reads the OCIRepositories and Kustomizations of a generated file.
func decode(t testing.TB, file string, data []byte, srcs map[string]*sourcev1.OCIRepository, ks map[string]*kustomizev1.Kustomization) {
	t.Helper()
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		switch tm.Kind {
		case sourcev1.OCIRepositoryKind:
			var o sourcev1.OCIRepository
			if err := yaml.UnmarshalStrict([]byte(doc), &o); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			srcs[o.Name] = &o
		case kustomizev1.KustomizationKind:
			var k kustomizev1.Kustomization
			if err := yaml.UnmarshalStrict([]byte(doc), &k); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			ks[k.Name] = &k
		}
	}
}

// Create creates the objects in fluxNS as Flux leaves them once it
// applied them: the project's by the root Kustomization (named root), the
// app's by the project's Kustomization or, when the app's file is in the
// cluster folder, by the root (kustomize-controller's owner labels).
func (o Objects) Create(t testing.TB, c client.Client, fluxNS, root string) {
	t.Helper()
	create := func(obj client.Object, by string) {
		obj.SetNamespace(fluxNS)
		l := obj.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[labelAppliedByName], l[labelAppliedByNamespace] = by, fluxNS
		obj.SetLabels(l)
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	appliedBy := root
	if o.ProjectSource != nil {
		create(o.ProjectSource, root)
		create(o.Project, root)
		if o.InProject {
			appliedBy = o.Project.Name
		}
	}
	for _, s := range o.Sources {
		create(s, appliedBy)
	}
	for _, k := range o.Kustomizations {
		create(k, appliedBy)
	}
}

// Condition is a status condition at the object's current generation.
func Condition(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

// Applied is kustomize-controller's Ready condition once it applied rev.
func Applied(rev string) metav1.Condition {
	return Condition(meta.ReadyCondition, metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied revision: "+rev)
}

// SetKustomization writes a Kustomization's status as kustomize-controller
// does: the revisions it applied and attempted, its conditions.
func SetKustomization(t testing.TB, c client.Client, k *kustomizev1.Kustomization, applied, attempted string, conds ...metav1.Condition) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	for i := range conds {
		conds[i].LastTransitionTime, conds[i].ObservedGeneration = metav1.Now(), k.Generation
	}
	k.Status.ObservedGeneration = k.Generation
	k.Status.LastAppliedRevision, k.Status.LastAttemptedRevision = applied, attempted
	k.Status.Conditions = conds
	if err := c.Status().Update(t.Context(), k); err != nil {
		t.Fatal(err)
	}
}

// SetSource writes an OCIRepository's status as source-controller does:
// the artifact it stored (none when stored is ""), the generation of its
// last successful reconcile (the current one when observed) and its
// conditions, at the current generation.
func SetSource(t testing.TB, c client.Client, o *sourcev1.OCIRepository, stored string, observed bool, conds ...metav1.Condition) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	for i := range conds {
		conds[i].LastTransitionTime, conds[i].ObservedGeneration = metav1.Now(), o.Generation
	}
	o.Status.ObservedGeneration = o.Generation
	if !observed {
		o.Status.ObservedGeneration = o.Generation - 1
	}
	o.Status.Artifact = nil
	if stored != "" {
		hex := stored[strings.LastIndex(stored, ":")+1:]
		path := "ocirepository/" + o.Namespace + "/" + o.Name + "/" + hex + ".tar.gz"
		o.Status.Artifact = &meta.Artifact{
			Path: path, URL: "http://source-controller." + o.Namespace + ".svc.cluster.local./" + path,
			Revision: stored, Digest: "sha256:5e0f6c1d2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5",
			LastUpdateTime: metav1.Now(), Size: ptr.To(int64(1024)),
			Metadata: map[string]string{"org.opencontainers.image.title": o.Annotations[layout.AnnotationArtifactPath]},
		}
	}
	o.Status.Conditions = conds
	if err := c.Status().Update(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}

// Stored is source-controller's Ready condition once it stored rev.
func Stored(rev string) metav1.Condition {
	return Condition(meta.ReadyCondition, metav1.ConditionTrue, meta.SucceededReason, "stored artifact for digest '"+rev+"'")
}

// Synced leaves an OCIRepository and the Kustomization that reads it as
// Flux does once it rolled the OCIRepository's pinned artifact out.
func Synced(t testing.TB, c client.Client, o *sourcev1.OCIRepository, k *kustomizev1.Kustomization) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	pin := o.Spec.Reference.Digest
	SetSource(t, c, o, pin, true, Stored(pin))
	SetKustomization(t, c, k, pin, pin, Applied(pin))
}
