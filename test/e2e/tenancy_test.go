package e2e

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-containerregistry/pkg/name"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// The tenancy test's projects: the attacker's team commits under shop, the
// team it attacks owns bank.
const (
	attackerNS = "shop"
	victimNS   = "bank"
)

// TestTenancyLockdown runs a fleet with a source per component
// (fleet.artifacts) on Flux with its multi-tenancy lockdown (the test
// cluster's default, as deploy/flux/kustomization.yaml sets it), then
// commits, one after the other, the fleets that a member of team shop with
// write access to the fleet (and push access to its artifacts) writes by
// hand into its own component's folder:
//
//	(a) a ClusterRoleBinding of the team's service accounts to cluster-admin;
//	(c) a Namespace named like the team's own, pod-security privileged;
//	(b) a Flux Kustomization that applies into team bank's namespace,
//	    reading the fleet's GitRepository in flux-system.
//
// The real controllers refuse each: the component's Kustomization (run as
// the project's service account, admin in its namespace only) ends
// Ready=False, forbidden, and neither the binding nor the Namespace's
// labels change; the hand-made Kustomization, which runs as the
// namespace's default account, ends Ready=False on its cross-namespace
// source and applies nothing into bank. A legitimate app added to the
// same project in the first of those commits deploys, and bank's app keeps
// running.
func TestTenancyLockdown(t *testing.T) {
	ctx := t.Context()
	reg := registrytest.New(t, registrytest.Options{})
	c := cluster.StartT(t, cluster.WithFluxArgs("kustomize-controller", "--requeue-dependency=2s"))

	apps := t.TempDir()
	platform := "apps_domain: apps.tenancy.test\nclusters:\n  - name: " + migrationCluster + "\nbuild: {pin: false}\n" +
		"policy: {pod_security: baseline}\n" +
		"fleet: {path: fleet, artifacts: {repository: " + reg.Host() + "/fleet, insecure: true}}\n" +
		"previews: {cluster: " + migrationCluster + ", apps_domain: preview.tenancy.test}\n"
	app := func(name string) string {
		return "name: " + name + "\ncomponents:\n  - name: api\n    type: workload\n    workload_spec:\n" +
			"      image: registry.tenancy.test/" + name + ":v1\n      port: 8080\n      resources: {requests: {cpu: 10m, memory: 16Mi}}\n"
	}
	golden.WriteFiles(t, apps, map[string]string{
		"platform.yaml":                        platform,
		"apps/" + attackerNS + "/web/app.yaml": app("web"),
		"apps/" + victimNS + "/login/app.yaml": app("login"),
	})
	git := gittest.NewServer(t)
	git.CreateRepo(t, "fleet.git", "main", nil)
	bare := git.Path("fleet.git")

	_, fleet1 := renderAndCommit(t, apps, bare, nil, "two projects")
	bootstrapFleet(t, c, git.RepoURL("fleet.git"))
	webKS, loginKS, cartKS := attackerNS+"-web-api", victimNS+"-login-api", attackerNS+"-cart-api"
	waitReady(t, c, map[string]string{attackerNS: webKS, victimNS: loginKS})
	login := deploymentUID(t, c, victimNS, "login-api")

	// The ServiceAccount and RoleBinding the root applied for the project.
	var rb rbacv1.RoleBinding
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: attackerNS, Name: layout.ProjectRoleBinding}, &rb); err != nil {
		t.Error(err)
	} else if rb.RoleRef.Name != layout.ProjectRole || len(rb.Subjects) != 1 || rb.Subjects[0].Name != layout.ProjectServiceAccount {
		t.Errorf("RoleBinding %s/%s: %+v %+v", attackerNS, rb.Name, rb.RoleRef, rb.Subjects)
	}

	// (a) A legitimate app added to the project, and, by hand, a
	// ClusterRoleBinding in web's component folder.
	golden.WriteFiles(t, apps, map[string]string{"apps/" + attackerNS + "/cart/app.yaml": app("cart")})
	_, rendered := renderAndCommit(t, apps, bare, fleet1, "the cart app")
	crb := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: shop-pwn\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n" +
		"subjects:\n- {kind: ServiceAccount, name: default, namespace: " + attackerNS + "}\n"
	fleetA := attack(t, reg.Host(), bare, rendered, "clusterrolebinding-shop-pwn.yaml", crb)
	requestFetch(t, c)
	waitReady(t, c, map[string]string{attackerNS: cartKS, victimNS: loginKS})
	waitRefused(t, c, attackerNS, webKS, "shop-pwn", "forbidden")
	if err := c.Client.Get(ctx, client.ObjectKey{Name: "shop-pwn"}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("(a) ClusterRoleBinding shop-pwn: %v, want not found", err)
	}

	// (c) The project's Namespace, its pod security lifted.
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + attackerNS + "\n  labels:\n" +
		"    pod-security.kubernetes.io/enforce: privileged\n"
	fleetC := attack(t, reg.Host(), bare, fleetA, "namespace-"+attackerNS+".yaml", ns)
	requestFetch(t, c)
	waitRefused(t, c, attackerNS, webKS, "namespaces", "forbidden")
	var got corev1.Namespace
	if err := c.Client.Get(ctx, client.ObjectKey{Name: attackerNS}, &got); err != nil {
		t.Fatal(err)
	}
	if level := got.Labels["pod-security.kubernetes.io/enforce"]; level != "baseline" {
		t.Errorf("(c) Namespace %s enforces pod security %q, want baseline", attackerNS, level)
	}

	// (b) A Flux Kustomization that applies web's folder into bank's
	// namespace, from the fleet's GitRepository.
	ks := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: shop-into-bank\n" +
		"spec:\n  interval: 1m\n  prune: true\n  path: ./fleet/apps/" + migrationCluster + "/" + attackerNS + "/cart/api\n" +
		"  targetNamespace: " + victimNS + "\n  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n"
	// web's Kustomization may create it (a Flux object in its own
	// namespace), and then health-checks it for as long as it fails.
	attack(t, reg.Host(), bare, fleetC, "kustomization-shop-into-bank.yaml", ks)
	requestFetch(t, c)
	waitRefused(t, c, attackerNS, "shop-into-bank", "cross-namespace")
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: victimNS, Name: "cart-api"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("(b) Deployment %s/cart-api: %v, want not found", victimNS, err)
	}

	// Through it all bank's app ran on, and the cart app deployed.
	if uid := deploymentUID(t, c, victimNS, "login-api"); uid != login {
		t.Errorf("bank's Deployment was recreated: %s, was %s", uid, login)
	}
	deploymentUID(t, c, attackerNS, "cart-api")

	// (d) A pull request of team shop changes its web app: render preview
	// pushes its preview, whose Kustomizations read artifacts in the
	// preview namespace as the project's service account there, so the
	// same lockdown runs it; closing the pull request removes it all.
	previewUnderLockdown(t, c, apps, bare, rendered)
}

// previewUnderLockdown runs pull request 7's preview of the web app of
// project shop on the lockdown cluster c, from the apps folder (its
// fleet folder rendered as fleet), and closes it.
func previewUnderLockdown(t *testing.T, c *cluster.Cluster, apps, bare string, fleet map[string]string) {
	t.Helper()
	ctx := t.Context()
	const pr = 7
	ns := layout.PreviewNamespace(attackerNS, pr)
	golden.WriteFiles(t, apps, map[string]string{".gitignore": "fleet/\n"})
	gittest.Git(t, apps, "init", "-q", "-b", "main")
	gittest.Git(t, apps, "add", "-A")
	gittest.Git(t, apps, "commit", "-q", "-m", "the specs")
	gittest.Git(t, apps, "checkout", "-q", "-b", "feature")
	web := "apps/" + attackerNS + "/web/app.yaml"
	golden.WriteFiles(t, apps, map[string]string{web: strings.Replace(golden.ReadFiles(t, apps)[web], ":v1", ":v2", 1)})
	gittest.Git(t, apps, "commit", "-q", "-am", "web v2")

	_, previewed, out := renderRunCommit(t, apps, bare, fleet, "preview pr-7", "preview", "--pr", "7", "--base", "main", "--mode", "dir", "--out", "fleet")
	if !strings.Contains(out, "artifacts: ") {
		t.Errorf("render preview pushed no artifacts:\n%s", out)
	}
	requestFetch(t, c)
	poll(t, "Deployment "+ns+"/web-api of the preview", 4*time.Minute, func() error {
		var d appsv1.Deployment
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-api"}, &d); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":v2") {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
	var kss kustomizev1.KustomizationList
	if err := c.Client.List(ctx, &kss, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(kss.Items) == 0 {
		t.Fatalf("no Kustomization in the preview namespace %s", ns)
	}
	ready := map[string]string{}
	for _, k := range kss.Items {
		if k.Spec.ServiceAccountName != layout.ProjectServiceAccount || k.Spec.SourceRef.Namespace != "" && k.Spec.SourceRef.Namespace != ns {
			t.Errorf("Kustomization %s/%s runs as %q from %s %s/%s, want the project's account and a source in its namespace",
				ns, k.Name, k.Spec.ServiceAccountName, k.Spec.SourceRef.Kind, k.Spec.SourceRef.Namespace, k.Spec.SourceRef.Name)
		}
		ready[ns] = k.Name
		waitReady(t, c, ready)
	}
	var got corev1.Namespace
	if err := c.Client.Get(ctx, client.ObjectKey{Name: ns}, &got); err != nil {
		t.Fatal(err)
	}
	if level := got.Labels["pod-security.kubernetes.io/enforce"]; level != "baseline" {
		t.Errorf("the preview namespace %s enforces pod security %q, want baseline (the platform's policy)", ns, level)
	}

	renderRunCommit(t, apps, bare, previewed, "close pr-7", "preview", "--pr", "7", "--close", "--mode", "dir", "--out", "fleet")
	requestFetch(t, c)
	poll(t, "the preview namespace "+ns+" deleted", 4*time.Minute, func() error {
		err := c.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	deploymentUID(t, c, attackerNS, "web-api") // the project's own app runs on
}

// attack adds file, with data, to the folder of the web app's
// api component in the fleet as rendered, lists it in the folder's
// kustomization.yaml, and does what render does for a folder: pushes its
// artifact and pins it in the project's Flux file, and the project's
// artifact in the project's file. It commits the change and returns the
// fleet as committed.
func attack(t *testing.T, registry, bare string, fleet map[string]string, file, data string) map[string]string {
	t.Helper()
	ctx := t.Context()
	const root = "fleet/"
	dir := layout.ComponentDir(migrationCluster, attackerNS, "web", "api")
	fluxFile := root + layout.AppFluxFile(migrationCluster, attackerNS, "web")
	projectFile := root + path.Join("clusters", migrationCluster, "projects", attackerNS+".yaml")
	after := map[string]string{}
	for p, b := range fleet {
		if strings.HasPrefix(p, root+dir+"/") && path.Base(p) != layout.Kustomization && strings.HasSuffix(p, ".yaml") &&
			!strings.HasPrefix(path.Base(p), "deployment-") && !strings.HasPrefix(path.Base(p), "service-") {
			continue // the previous attack's file
		}
		after[p] = b
	}
	after[root+dir+"/"+file] = data
	kz := root + dir + "/" + layout.Kustomization
	var res []string
	for p := range after {
		if strings.HasPrefix(p, root+dir+"/") && path.Base(p) != layout.Kustomization {
			res = append(res, "- "+path.Base(p))
		}
	}
	slices.Sort(res)
	after[kz] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n" + strings.Join(res, "\n") + "\n"

	oldArt, newArt := folderArtifact(t, fleet, dir), folderArtifact(t, after, dir)
	after[fluxFile] = strings.ReplaceAll(after[fluxFile], oldArt.Digest.String(), newArt.Digest.String())
	fluxDir := layout.FluxDir(migrationCluster, attackerNS)
	oldProject, newProject := projectArtifact(t, fleet, fluxDir), projectArtifact(t, after, fluxDir)
	after[projectFile] = strings.ReplaceAll(after[projectFile], oldProject.Digest.String(), newProject.Digest.String())
	if _, err := artifact.Push(ctx, registry+"/fleet", []*artifact.Artifact{newArt, newProject}, artifact.PushOptions{Name: []name.Option{name.Insecure}}); err != nil {
		t.Fatal(err)
	}
	change := map[string]string{}
	for p, b := range after {
		if fleet[p] != b {
			change[p] = b
		}
	}
	for p := range fleet {
		if _, ok := after[p]; !ok {
			change[p] = ""
		}
	}
	gittest.CommitFiles(t, bare, "main", "by hand: "+file, change)
	return after
}

// folderArtifact packs a component folder of the fleet (paths under fleet/)
// as render does.
func folderArtifact(t *testing.T, fleet map[string]string, dir string) *artifact.Artifact {
	t.Helper()
	var files []generate.File
	for p, b := range fleet {
		if rel, ok := strings.CutPrefix(p, "fleet/"); ok && strings.HasPrefix(rel, dir+"/") {
			files = append(files, generate.File{Path: rel, Data: []byte(b)})
		}
	}
	slices.SortFunc(files, func(a, b generate.File) int { return strings.Compare(a.Path, b.Path) })
	a, err := generate.ComponentArtifact(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// projectArtifact packs a project's Flux folder of the fleet as render does.
func projectArtifact(t *testing.T, fleet map[string]string, dir string) *artifact.Artifact {
	t.Helper()
	var files []artifact.File
	for p, b := range fleet {
		if rel, ok := strings.CutPrefix(p, "fleet/"+dir+"/"); ok {
			files = append(files, artifact.File{Name: rel, Data: []byte(b)})
		}
	}
	slices.SortFunc(files, func(a, b artifact.File) int { return strings.Compare(a.Name, b.Name) })
	a, err := artifact.Build(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitReady waits until each named Kustomization (by namespace) is Ready
// at its current spec and has applied its source's current artifact.
func waitReady(t *testing.T, c *cluster.Cluster, kss map[string]string) {
	t.Helper()
	for ns, name := range kss {
		poll(t, "Kustomization "+ns+"/"+name+" Ready", 4*time.Minute, func() error {
			k, err := kustomization(t.Context(), c, ns, name)
			if err != nil {
				return err
			}
			ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
			if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != k.Generation || k.Status.LastAttemptedRevision != k.Status.LastAppliedRevision {
				return fmt.Errorf("%s", conditionText(ready))
			}
			return nil
		})
	}
}

// waitRefused waits until the Kustomization ns/name is Ready=False at its
// current spec, with a message that holds each of why.
func waitRefused(t *testing.T, c *cluster.Cluster, ns, name string, why ...string) {
	t.Helper()
	poll(t, "Kustomization "+ns+"/"+name+" refused ("+strings.Join(why, ", ")+")", 4*time.Minute, func() error {
		k, err := kustomization(t.Context(), c, ns, name)
		if err != nil {
			return err
		}
		ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
		if ready == nil || ready.Status != metav1.ConditionFalse || ready.ObservedGeneration != k.Generation {
			return fmt.Errorf("%s", conditionText(ready))
		}
		for _, w := range why {
			if !strings.Contains(ready.Message, w) {
				return fmt.Errorf("%s", conditionText(ready))
			}
		}
		t.Logf("%s/%s: %s", ns, name, ready.Message)
		return nil
	})
}

// kustomization returns the Kustomization ns/name, or, not there,
// flux-system/name, where a fleet rendered before the projects' namespaces
// held their Flux objects has it (to run this test on such a fleet).
func kustomization(ctx context.Context, c *cluster.Cluster, ns, name string) (*kustomizev1.Kustomization, error) {
	var k kustomizev1.Kustomization
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &k)
	if apierrors.IsNotFound(err) {
		err = c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNS, Name: name}, &k)
	}
	return &k, err
}

// deploymentUID returns the UID of the Deployment ns/name, which must
// exist.
func deploymentUID(t *testing.T, c *cluster.Cluster, ns, name string) string {
	t.Helper()
	var d appsv1.Deployment
	if err := c.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
		t.Fatal(err)
	}
	return string(d.UID)
}
