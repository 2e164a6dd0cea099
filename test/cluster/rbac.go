package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// The Flux controllers here run out of the cluster, as the admin of the
// kubeconfig; what Flux's install adds to a cluster for its RBAC is added
// by Start, so that impersonation works as it does there:
//   - the service accounts kustomize-controller and helm-controller in
//     FluxNamespace, bound to cluster-admin (Flux's cluster-reconciler
//     binding): what the root Kustomization runs as with the lockdown
//     (RootServiceAccount), since a Flux object that names no account then
//     runs as its namespace's default one;
//   - the ClusterRoles flux-edit and flux-view, aggregated into
//     Kubernetes' admin, edit and view: a namespace's admin may write
//     Flux's objects in it (a project's service account, bound to admin,
//     applies its apps' Kustomizations and sources).
const (
	// RootServiceAccount is the account, in FluxNamespace, that a Flux
	// object the platform owns (the root Kustomization) names to run as
	// with the lockdown: kustomize-controller's own, as `flux bootstrap`
	// with the lockdown patch sets on the flux-system Kustomization.
	RootServiceAccount = "kustomize-controller"
)

// LockdownArgs are the flags of Flux's multi-tenancy lockdown for
// kustomize- and helm-controller, as deploy/flux/lockdown-patch.yaml sets
// them.
var LockdownArgs = []string{"--no-cross-namespace-refs=true", "--default-service-account=" + layout.LockdownServiceAccount}

// installFluxRBAC creates what Flux's install adds for its RBAC (see
// above).
func installFluxRBAC(ctx context.Context, c client.Client) error {
	fluxGroups := []string{
		"notification.toolkit.fluxcd.io", "source.toolkit.fluxcd.io", "source.extensions.fluxcd.io",
		"helm.toolkit.fluxcd.io", "image.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io",
	}
	aggregate := func(roles ...string) map[string]string {
		m := map[string]string{}
		for _, r := range roles {
			m["rbac.authorization.k8s.io/aggregate-to-"+r] = "true"
		}
		return m
	}
	objs := []client.Object{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "flux-edit", Labels: aggregate("admin", "edit")},
			Rules: []rbacv1.PolicyRule{{APIGroups: fluxGroups, Resources: []string{"*"},
				Verbs: []string{"create", "delete", "deletecollection", "patch", "update"}}},
		},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "flux-view", Labels: aggregate("admin", "edit", "view")},
			Rules:      []rbacv1.PolicyRule{{APIGroups: fluxGroups, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
		},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "kustomize-controller", Namespace: FluxNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "helm-controller", Namespace: FluxNamespace}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "cluster-reconciler-" + FluxNamespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{
				{Kind: rbacv1.ServiceAccountKind, Name: "kustomize-controller", Namespace: FluxNamespace},
				{Kind: rbacv1.ServiceAccountKind, Name: "helm-controller", Namespace: FluxNamespace},
			},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}
