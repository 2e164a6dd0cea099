// Package layout is where every file of a rendered fleet goes, relative to
// the fleet root, and what every generated object, label and annotation is
// named. render writes there, verify and review read from there, and the
// folders render owns are listed here too, so the names are built in one
// place. It imports nothing of the project (the platform is an interface,
// Platform, that spec.Platform satisfies), so every package can ask it,
// spec included:
//
//	<cluster path>/apps/<project>-<app>.yaml            the app's Flux Kustomizations
//	<cluster path>/projects/<project>.yaml              the project's Namespace, service account and RoleBinding
//	apps/<cluster>/<project>/<app>/<component>/         kustomization.yaml + <kind>-<name>.yaml
//	apps/<cluster>/<project>/<app>/release.yaml         with platform environments: the app's release there
//
// An app's Flux objects live in its project's namespace and run as the
// project's service account (ProjectServiceAccount), which the project's
// file binds to ProjectRole in that namespace only; the cluster's root
// Kustomization applies that file, none of the project's own. A fleet
// whose apps' Kustomizations lived in the Flux namespace moves them in two
// renders: the first keeps them there with spec.prune: false, so that
// deleting them deletes nothing they applied; the second moves them.
//
// The cluster path is the cluster's folder in the fleet (platform.yaml
// clusters[].path, clusters/<name> by default); the cluster's root Flux
// Kustomization (what `flux bootstrap` sets up) applies everything in it,
// the Namespaces first. For a cluster Flux reaches through a kubeconfig,
// the project's file holds instead the Flux Kustomization that applies the
// Namespace from apps/<cluster>/<project>/_project/ (ProjectDir).
//
// With a source per project (platform.yaml fleet.artifacts, on a cluster
// Flux runs in), an app's Flux objects move out of the cluster folder into
// the project's folder of Flux files, which the project's own
// Kustomization applies from the project's artifact; the project's file
// holds its Namespace and that source:
//
//	apps/<cluster>/<project>/_flux/<app>.yaml           the app's OCIRepositories and Kustomizations
//
// A fleet whose root Kustomization applied an app's Flux objects from the
// cluster folder moves them in two renders: the first keeps them there,
// each marked PruneAnnotation: PruneDisabled, so that the root leaves them
// on the cluster once it no longer applies them; the second moves them.
package layout

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

const (
	// AppsDir holds the objects of every cluster's apps.
	AppsDir = "apps"
	// Kustomization is the file that lists a folder's objects.
	Kustomization = "kustomization.yaml"
	// projectFolder sits among a project's apps and holds its Namespace.
	projectFolder = "_project"
	// fluxFolder sits among a project's apps and holds their Flux objects
	// when the project has a source of its own.
	fluxFolder = "_flux"
)

// The mark that keeps an app's Flux objects on the cluster while they move
// to their project's source.
const (
	// PruneAnnotation is kustomize-controller's annotation that keeps an
	// object from being pruned when the Kustomization that applied it no
	// longer applies it.
	PruneAnnotation = "kustomize.toolkit.fluxcd.io/prune"
	// PruneDisabled is PruneAnnotation's value that keeps the object.
	PruneDisabled = "disabled"
	// PruneDisabledLine is the mark as it reads: a line of a file render
	// writes, without its indentation.
	PruneDisabledLine = PruneAnnotation + ": " + PruneDisabled
)

// Each project's Flux objects run as a service account of the project,
// in its namespace, bound there (and nowhere else) to Kubernetes' admin
// ClusterRole: Flux's multi-tenancy model. render writes the account and
// its binding into the project's file in the cluster folder, next to the
// Namespace, which the cluster's root Kustomization applies; the project's
// own objects cannot create or change them.
//
// admin rather than cluster-admin: bound in one namespace both reach only
// that namespace's objects, but cluster-admin also lets the account change
// the Namespace object itself (its pod-security labels), its
// ResourceQuotas and LimitRanges; admin grants the workloads' kinds (with
// Flux's own, which Flux's install aggregates into admin) and refuses
// those.
const (
	// ProjectServiceAccount is the service account, in each project's
	// namespace, that Flux impersonates for the project's Kustomizations
	// and HelmReleases (their spec.serviceAccountName).
	ProjectServiceAccount = "flux-reconciler"
	// ProjectRoleBinding binds ProjectServiceAccount to ProjectRole in the
	// project's namespace.
	ProjectRoleBinding = "flux-reconciler"
	// ProjectRole is the ClusterRole that ProjectRoleBinding grants in the
	// project's namespace only.
	ProjectRole = "admin"
	// LockdownServiceAccount is the account kustomize- and helm-controller
	// impersonate for a Flux object that names none, with Flux's lockdown
	// (--default-service-account): each namespace's own default account,
	// which has no rights, so that such an object applies nothing.
	LockdownServiceAccount = "default"
)

// The mark of a project whose last app went: render keeps its file, with
// the Namespace, the project's account and its binding only, for one more
// render, so that Flux deletes the apps' Kustomizations (which delete what
// they applied, as that account) before the account and the Namespace.
const (
	// EmptiedAnnotation marks the project's Namespace.
	EmptiedAnnotation = "fleetwright.io/emptied"
	// Emptied is its value.
	Emptied = "true"
	// EmptiedLine is the mark as it reads in a file render writes,
	// without its indentation.
	EmptiedLine = EmptiedAnnotation + `: "` + Emptied + `"`
)

// IsEmptied reports whether a project's file, as render writes it, is
// marked EmptiedAnnotation.
func IsEmptied(file []byte) bool { return bytes.Contains(file, []byte(EmptiedLine)) }

// kustomize-controller labels every object it applies with the name and
// namespace of the Kustomization that applied it (its owner labels): it
// prunes, and deletes with that Kustomization, only objects that carry its
// own.
const (
	AppliedByNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	AppliedByNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// AppliedReadyExpr is the readyExpr of a dependsOn entry on a component that
// reads its own artifact: the dependency must be Ready at its current spec
// and have applied the artifact digest (sha256:<hex>) this fleet commit
// pins for it. kustomize-controller's own check, which a readyExpr
// replaces, asks only for Ready when the two read different sources (it
// compares revisions only within one source), so a commit that changes a
// dependency and its dependent (a new migration job and the api that needs
// it) could apply the dependent first, while the dependency was still Ready
// at its previous artifact. Naming the digest also makes the dependent's
// Kustomization change, and be checked again, whenever its dependency's
// artifact does, as one GitRepository for the whole fleet would. The has()
// guards keep a dependency that has not applied anything yet a plain "not
// ready" rather than an evaluation error.
func AppliedReadyExpr(digest string) string {
	return readyExprPrefix + digest + "'" +
		" && has(dep.status.observedGeneration) && dep.status.observedGeneration == dep.metadata.generation" +
		" && has(dep.status.conditions) && dep.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
}

const readyExprPrefix = "has(dep.status.lastAppliedRevision) && dep.status.lastAppliedRevision == '"

// ReadyExprDigest returns the digest an AppliedReadyExpr names, or false
// when expr is not one.
func ReadyExprDigest(expr string) (string, bool) {
	rest, ok := strings.CutPrefix(expr, readyExprPrefix)
	if !ok {
		return "", false
	}
	digest, _, ok := strings.Cut(rest, "'")
	if !ok || AppliedReadyExpr(digest) != expr {
		return "", false
	}
	return digest, true
}

// Platform is what the layout knows of the platform (spec.Platform is
// one): the clusters and each one's folder in the fleet.
type Platform interface {
	// ClusterNames are the platform's clusters, in its order.
	ClusterNames() []string
	// ClusterPath is a cluster's folder in the fleet (platform.yaml
	// clusters[].path, with its default); false for a cluster the
	// platform does not list.
	ClusterPath(name string) (string, bool)
}

// AppRef is an app as users name it, its project and name: the app
// itself, on whichever clusters and in whichever environments it runs.
// Every type that says which app embeds or holds one, rather than a
// project and a name of its own. Its JSON is {"project": …, "name": …},
// which a type that embeds it writes among its own fields.
type AppRef struct {
	Project string `json:"project"`
	Name    string `json:"name"`
}

// Ref is the app as "project/name", which ParseRef reads.
func (r AppRef) Ref() string { return r.Project + "/" + r.Name }

// Named reports whether r names an app: it has a project and a name.
func (r AppRef) Named() bool { return r.Project != "" && r.Name != "" }

// Sibling is the app named name in r's project.
func (r AppRef) Sibling(name string) AppRef { return AppRef{Project: r.Project, Name: name} }

// ParseRef reads an app written "project/name" (AppRef.Ref).
func ParseRef(s string) (AppRef, error) {
	project, name, ok := strings.Cut(s, "/")
	if !ok || project == "" || name == "" || strings.Contains(name, "/") {
		return AppRef{}, fmt.Errorf("%q is not an app: write PROJECT/APP", s)
	}
	return AppRef{Project: project, Name: name}, nil
}

// App names one copy of an app in the fleet: the app (its project and
// name, and Ref) on one cluster.
type App struct {
	Cluster string
	AppRef
}

// Key is the app as "cluster/project/name", as AppOf returns it: one copy
// of the app, on one cluster.
func (a App) Key() string { return a.Cluster + "/" + a.Ref() }

// ParseKey reads an app written "cluster/project/name" (App.Key).
func ParseKey(s string) (App, error) {
	cluster, rest, ok := strings.Cut(s, "/")
	ref, err := ParseRef(rest)
	if !ok || cluster == "" || err != nil {
		return App{}, fmt.Errorf("%q is not an app on a cluster: write CLUSTER/PROJECT/APP", s)
	}
	return App{Cluster: cluster, AppRef: ref}, nil
}

// Sibling is the app named name in a's cluster and project.
func (a App) Sibling(name string) App { return App{Cluster: a.Cluster, AppRef: a.AppRef.Sibling(name)} }

// DefaultClusterDir is the folder of a cluster whose platform.yaml entry
// names no path.
func DefaultClusterDir(cluster string) string { return path.Join("clusters", cluster) }

// ObjectName is the name of a component's objects (its Deployment,
// Service, Ingress…, its addon's Helm release): the app's name and the
// component's, so that the components of a project's apps share its
// namespace.
func ObjectName(app, component string) string { return app + "-" + component }

// ComponentFluxName is the name of a component's Flux Kustomization and,
// with a source per component, of its OCIRepository. The webhook counts an
// event of an object of that name in the Flux namespace for the component's
// app (its name and labels name the same app).
func ComponentFluxName(project, app, component string) string {
	return project + "-" + ObjectName(app, component)
}

// ProjectFluxName is the name of a project's own Flux Kustomization and
// OCIRepository: those that apply its Namespace, or its apps' Flux objects
// from the project's source.
func ProjectFluxName(project string) string { return "project-" + project }

// FluxDir is the folder of a project's apps' Flux objects when the project
// has a source of its own: the folder its artifact is built from.
func FluxDir(cluster, project string) string {
	return path.Join(AppsDir, cluster, project, fluxFolder)
}

// AppFluxFile is the file of an app's Flux objects in its project's
// FluxDir.
func AppFluxFile(cluster, project, app string) string {
	return path.Join(FluxDir(cluster, project), app+".yaml")
}

// FluxDirs are the folders that hold apps' Flux objects: each cluster's
// apps folder and the Flux folder of each project of apps.
func FluxDirs(p Platform, apps []App) []string {
	set := map[string]bool{}
	for _, c := range p.ClusterNames() {
		set[path.Join(ClusterDir(p, c), "apps")] = true
		set[ProjectsDir(p, c)] = true
	}
	for _, a := range apps {
		set[path.Dir(AppFile(p, a.Cluster, a.Project, a.Name))] = true
		set[FluxDir(a.Cluster, a.Project)] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// FluxDirOf is the project Flux folder (FluxDir) that holds the file p, or
// "" when p is elsewhere.
func FluxDirOf(p string) string {
	l := Parse(p)
	if l.Preview != 0 || l.Folder != fluxFolder || strings.Contains(l.Rest, "/") {
		return ""
	}
	return FluxDir(l.Cluster, l.Project)
}

// FluxDirAbove is the project Flux folder (FluxDir) that holds the fleet
// file p at any depth, or "" when p is elsewhere. FluxDirOf takes only the
// files render writes there, <app>.yaml; FluxDirAbove takes as well a file
// in a folder below, which a change made by hand may add and which the
// folder's artifact packs with the rest. The folder is p's own leading
// segments, as they are.
func FluxDirAbove(p string) string {
	l := Parse(p)
	if l.Preview != 0 || l.Folder != fluxFolder {
		return ""
	}
	return p[:len(p)-len(l.Rest)-1]
}

// projectLevel reports whether a folder name among a project's apps is one
// of the project's own (_project, _flux): app names cannot start with "_".
func projectLevel(name string) bool { return strings.HasPrefix(name, "_") }

// ComponentDir is the folder of a component's objects.
func ComponentDir(cluster, project, app, component string) string {
	return path.Join(AppsDir, cluster, project, app, component)
}

// AppDir is the folder of an app's component folders.
func AppDir(cluster, project, app string) string {
	return path.Join(AppsDir, cluster, project, app)
}

// ReleaseFileName is the name of the file, in an app's folder (AppDir),
// that records the release of an app in a platform environment: the spec
// revision and images it was rendered from and the files it consists of.
const ReleaseFileName = "release.yaml"

// ReleaseFile is the release file of an app in an environment.
func ReleaseFile(cluster, project, app string) string {
	return path.Join(AppDir(cluster, project, app), ReleaseFileName)
}

// ProjectDir is the folder of a project's Namespace on a cluster Flux
// reaches through a kubeconfig.
func ProjectDir(cluster, project string) string {
	return path.Join(AppsDir, cluster, project, projectFolder)
}

// ObjectFile is the name of the file of one object in its folder.
func ObjectFile(kind, name string) string {
	return strings.ToLower(kind) + "-" + name + ".yaml"
}

// ClusterDir is the folder of a cluster's Flux entry files: its path in
// the platform, or clusters/<name> for a cluster the platform does not
// list.
func ClusterDir(p Platform, cluster string) string {
	if dir, ok := p.ClusterPath(cluster); ok {
		return dir
	}
	return DefaultClusterDir(cluster)
}

// AppFile is the file of an app's Flux Kustomizations.
func AppFile(p Platform, cluster, project, app string) string {
	return path.Join(ClusterDir(p, cluster), "apps", AppFileName(project, app))
}

// AppFileName is the name of an app's file (AppFile) in its cluster's
// apps folder.
func AppFileName(project, app string) string { return project + "-" + app + ".yaml" }

// ProjectFile is the file of a project's Namespace in the cluster folder
// (or of the Flux Kustomization that applies it; see the package
// documentation).
func ProjectFile(p Platform, cluster, project string) string {
	return path.Join(ProjectsDir(p, cluster), project+".yaml")
}

// ProjectsDir is the folder of the projects' files (ProjectFile) of a
// cluster.
func ProjectsDir(p Platform, cluster string) string {
	return path.Join(ClusterDir(p, cluster), "projects")
}

// ProjectOfFile is the project whose file (ProjectFile) p is on cluster, or
// "" when p is no such file.
func ProjectOfFile(p Platform, cluster, file string) string {
	project, ok := strings.CutSuffix(path.Base(file), ".yaml")
	if !ok || project == "" || ProjectFile(p, cluster, project) != file {
		return ""
	}
	return project
}

// ManagedDirs are the folders whose generated files render owns: a file
// there that it no longer generates is removed. Sorted.
func ManagedDirs(p Platform) []string {
	var dirs []string
	for _, c := range p.ClusterNames() {
		dirs = append(dirs, path.Join(ClusterDir(p, c), "apps"), ProjectsDir(p, c), path.Join(AppsDir, c))
	}
	slices.Sort(dirs)
	return dirs
}

// ClusterOf returns the cluster a fleet file belongs to: the cluster whose
// folder holds it, or whose apps/<cluster>/ folder does; "" for none.
func ClusterOf(p Platform, file string) string {
	for _, c := range p.ClusterNames() {
		if strings.HasPrefix(file, ClusterDir(p, c)+"/") || strings.HasPrefix(file, AppsDir+"/"+c+"/") {
			return c
		}
	}
	return ""
}

// AppOf returns the app (cluster/project/app, as App.Key) whose
// component folders hold the fleet file, or "" for project and other
// files.
func AppOf(file string) string {
	if l := Parse(file); l.Preview == 0 {
		return l.AppKey()
	}
	return ""
}

// AppsOf returns the sorted, distinct apps that the fleet files belong to.
func AppsOf(files []string) []string {
	set := map[string]bool{}
	for _, p := range files {
		if a := AppOf(p); a != "" {
			set[a] = true
		}
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// InComponentDir reports whether the fleet file p (a slash path relative
// to the fleet folder) is inside a component's folder,
// apps/<cluster>/<project>/<app>/<component>/, where Flux applies only what
// the generated kustomization.yaml lists.
func InComponentDir(p string) bool {
	l := Parse(p)
	return l.Preview == 0 && l.Component != ""
}

// ComponentDirOf returns the component folder that holds the fleet file
// p, or "" when p is in none (see InComponentDir).
func ComponentDirOf(p string) string {
	l := Parse(p)
	if l.Preview != 0 || l.Component == "" {
		return ""
	}
	return ComponentDir(l.Cluster, l.Project, l.App, l.Component)
}
