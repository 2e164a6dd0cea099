package generate

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/manifest"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Tenancy: Flux's multi-tenancy model. On a cluster Flux runs in, each
// project's Flux objects (its apps' Kustomizations, their OCIRepositories,
// the project's own source and Kustomization; the HelmReleases and
// HelmRepositories were there already) live in the project's namespace
// and run as the project's service account (layout.ProjectServiceAccount),
// which a RoleBinding in that namespace only binds to layout.ProjectRole.
// The project's file in the cluster folder holds the account and the
// binding next to the Namespace: the cluster's root Kustomization applies
// them, never one of the project's own. With Flux's lockdown
// (--no-cross-namespace-refs, --default-service-account) nothing a team
// commits then reaches another namespace or the cluster's scope: a Flux
// object it adds runs as its namespace's default account, and may read
// sources of its own namespace only.
//
// A cluster Flux reaches through a kubeconfig keeps the apps' Flux objects
// in the Flux namespace (the kubeconfig Secret is there), run as the
// cluster's service_account as before.
//
// The move. A fleet whose apps' Kustomizations live in the Flux namespace
// cannot simply re-render them in the project's: the old ones would be
// deleted (pruned by the Kustomization that applied them), and a deleted
// Kustomization with spec.prune deletes everything it applied. So the move
// takes two renders, as the move to a source per project does (see
// placement): the first keeps them where they are, as they were, with
// spec.prune: false; once Flux has applied that, the second renders them
// in the project's namespace, and the old ones are deleted without
// deleting what they applied, which the new ones take over (server-side
// apply under the same field manager: nothing is recreated). On a cluster
// with a source per project the project's own Kustomization moves in the
// second render too, and deleting the old one (still pruning) deletes the
// old apps' objects it applied: a project moves as a whole, so every app
// of it stays in the Flux namespace until every one of them is ready.

// Removing a project. A project's file goes when its last app does, but
// not in the same render: the cluster's root Kustomization would then
// delete the apps' Kustomizations and the project's account, its
// RoleBinding and its Namespace at once, and each Kustomization's
// finalizer, which deletes what it applied as the project's account, would
// race the account's deletion (and lose: nothing pruned, no chart
// uninstalled, the objects left to the namespace's deletion). So the render
// that finds a project without apps, whose file the fleet as it is holds
// as render writes it for a project with apps, keeps the file with the
// Namespace (marked layout.EmptiedAnnotation), the account and its
// binding only: Flux deletes the apps' Kustomizations, which delete what
// they applied as the account. The next render, finding the file marked,
// leaves it out, and Flux deletes the Namespace. A project that gets an
// app back in between gets its file back whole.

// emptied renders the files of the projects of a cluster Flux runs in that
// have no app left this render (withApps holds those that have) but
// whose file the fleet as it is holds (Options.PreviousDir), unmarked.
func (r *renderer) emptied(withApps map[[2]string]bool) ([]emptiedProject, error) {
	if r.opts.Previous == nil || r.opts.PreviousDir == nil {
		return nil, nil
	}
	var files []emptiedProject
	for _, cl := range r.opts.Platform.Clusters {
		if r.projectKustomization(cl.Name) {
			continue
		}
		for _, p := range r.opts.PreviousDir(layout.ProjectsDir(r.opts.Platform, cl.Name)) {
			project := layout.ProjectOfFile(r.opts.Platform, cl.Name, p)
			if project == "" || withApps[[2]string{cl.Name, project}] {
				continue
			}
			data, ok := r.opts.Previous(p)
			if !ok || !strings.HasPrefix(string(data), manifest.Header) || layout.IsEmptied(data) {
				continue
			}
			ns := r.namespace(project, map[string]string{layout.EmptiedAnnotation: layout.Emptied})
			out, err := manifest.Document(append([]any{ns}, projectAccount(project, projectLabels(project))...)...)
			if err != nil {
				return nil, err
			}
			files = append(files, emptiedProject{File{Path: p, Data: append([]byte(manifest.Header), out...)}, cl.Name + "/" + project})
		}
	}
	return files, nil
}

// emptiedProject is the file of a project whose last app went, and the
// project (cluster/project).
type emptiedProject struct {
	File
	Key string
}

// fluxNamespace is the namespace of the Flux objects of the apps of
// project on cluster (see the comment above).
func (r *renderer) fluxNamespace(cluster, project string) string {
	if r.projectKustomization(cluster) {
		return r.opts.Platform.Fleet.SourceNamespace
	}
	return project
}

// inFluxNamespace reports whether a is still rendered in the Flux
// namespace, as before the move (see the comment above).
func (r *renderer) inFluxNamespace(a *load.LoadedApp) bool {
	return r.stayed[a.Key()]
}

// oldNamespace is what a generated Flux file of the fleet as it is says of
// the move: whether its Kustomizations live in the Flux namespace, and
// whether each of those has spec.prune: false.
func (r *renderer) oldNamespace(p string) (inFlux, pruneOff bool) {
	if r.opts.Previous == nil {
		return false, false
	}
	data, ok := r.opts.Previous(p)
	if !ok || !strings.HasPrefix(string(data), manifest.Header) {
		return false, false
	}
	ns := "\n  namespace: " + r.opts.Platform.Fleet.SourceNamespace + "\n"
	pruneOff = true
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		if !strings.Contains(doc, "\nkind: Kustomization\n") || !strings.Contains(doc, ns) {
			continue
		}
		inFlux = true
		if !strings.Contains(doc, "\n  prune: false\n") {
			pruneOff = false
		}
	}
	return inFlux, inFlux && pruneOff
}

// planMove decides which apps stay in the Flux namespace this render, from
// the fleet as it is, and which of them do so for the first time (whose
// Kustomizations get spec.prune: false now, and move with the next render).
// places holds each app's placement.
func (r *renderer) planMove(apps []*load.LoadedApp, places []placement) (preparing []string) {
	r.stayed = map[string]bool{}
	if r.opts.Previous == nil {
		return nil
	}
	type state struct{ live, notReady bool }
	projects := map[[2]string]*state{}
	appState := make([]state, len(apps))
	for i, a := range apps {
		if r.projectKustomization(a.Cluster) {
			continue
		}
		var s state
		for _, p := range []string{layout.AppFile(r.opts.Platform, a.Cluster, a.Project, a.Spec.Name), layout.AppFluxFile(a.Cluster, a.Project, a.Spec.Name)} {
			if in, off := r.oldNamespace(p); in {
				s.live = true
				s.notReady = s.notReady || !off
			}
		}
		// While the Flux objects move to the project's source they stay
		// in the Flux namespace; the namespace moves after.
		if s.live && (places[i] == placePrepare || places[i] == placeMove) {
			s.notReady = true
		}
		appState[i] = s
		if r.projectSources(a.Cluster) {
			k := [2]string{a.Cluster, a.Project}
			ps := projects[k]
			if ps == nil {
				ps = &state{}
				projects[k] = ps
			}
			ps.live = ps.live || s.live
			ps.notReady = ps.notReady || s.notReady
		}
	}
	for k, ps := range projects {
		if !ps.live {
			// The project's own Kustomization may be all that is left in
			// the Flux namespace (its apps removed or moved by hand).
			in, _ := r.oldNamespace(layout.ProjectFile(r.opts.Platform, k[0], k[1]))
			ps.live = in
		}
	}
	for i, a := range apps {
		s := appState[i]
		stay := s.live && s.notReady
		if ps := projects[[2]string{a.Cluster, a.Project}]; ps != nil {
			stay = ps.live && ps.notReady
			if stay {
				if r.stayedProjects == nil {
					r.stayedProjects = map[[2]string]bool{}
				}
				r.stayedProjects[[2]string{a.Cluster, a.Project}] = true
			}
		}
		if stay {
			r.stayed[a.Key()] = true
			preparing = append(preparing, a.Key())
		}
	}
	return preparing
}

// projectAccount is the project's service account and its RoleBinding to
// layout.ProjectRole in the project's namespace.
func projectAccount(project string, lbls map[string]string) []any {
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: layout.ProjectServiceAccount, Namespace: project, Labels: lbls},
	}
	rb := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: layout.ProjectRoleBinding, Namespace: project, Labels: lbls},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: layout.ProjectRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: layout.ProjectServiceAccount, Namespace: project}},
	}
	return []any{sa, rb}
}
