package e2e

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// The migration test's names: testdata/migration/specs holds the apps,
// testdata/migration/before the fleet the previous layout rendered from
// them (a project Kustomization for the Namespace that every component
// depended on, and a dependsOn for every export).
const (
	migrationCluster = "migration"
	migrationNS      = "shop"
	chartPlaceholder = "http://charts.migration.invalid"
)

// TestMigrationFromPreviousLayout applies the fleet the previous layout
// wrote, then what render writes today from the same specs over it, on the
// real controllers: Flux takes the change without deleting anything that
// runs (every object keeps its UID, every ReplicaSet stays), the project
// Kustomization goes and its Namespace stays, applied by the root
// Kustomization, and nothing is left that no Kustomization owns.
//
// It tests correctness, not speed: kustomize-controller retries a
// dependency after 2s here.
func TestMigrationFromPreviousLayout(t *testing.T) {
	ctx := t.Context()
	chartURL, stopCharts, err := cluster.StartChartRepo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopCharts)
	c := cluster.StartT(t, cluster.WithFluxArgs("kustomize-controller", "--requeue-dependency=2s"), cluster.WithFluxArgs("helm-controller", "--requeue-dependency=2s"))

	// The apps repository, with the previous fleet in its fleet folder.
	apps := t.TempDir()
	copyTree(t, "testdata/migration/specs", apps, chartURL)
	copyTree(t, "testdata/migration/before", filepath.Join(apps, "fleet"), chartURL)
	before := readTree(t, apps, "fleet")

	git := gittest.NewServer(t)
	git.CreateRepo(t, "fleet.git", "main", nil)
	bare := git.Path("fleet.git")
	rev1 := "main@sha1:" + gittest.CommitFiles(t, bare, "main", "the previous layout", before)
	for _, o := range []client.Object{
		&sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: fluxNS},
			Spec: sourcev1.GitRepositorySpec{URL: git.RepoURL("fleet.git"), Interval: metav1.Duration{Duration: time.Minute},
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
		},
		&kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + migrationCluster, Namespace: fluxNS},
			Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./fleet/clusters/" + migrationCluster, Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}},
		},
	} {
		if err := c.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	oldKS := []string{"fleet-migration", "project-shop", "shop-orders-api", "shop-orders-db", "shop-web-api", "shop-web-cron", "shop-web-worker"}
	waitKustomizations(t, c, rev1, oldKS)
	uids := liveUIDs(t, c)
	t.Logf("the previous layout is applied at %s: %d objects", rev1, len(uids))

	// render over it, as a platform team upgrading fleetwright would.
	rev2, _ := renderAndCommit(t, apps, bare, before, "re-rendered")
	requestFetch(t, c)
	newKS := []string{"fleet-migration", "shop-orders-api", "shop-orders-db", "shop-web-api", "shop-web-cron", "shop-web-worker"}
	waitKustomizations(t, c, rev2, newKS)

	// The project Kustomization is gone, once its finalizer ran.
	poll(t, "the project Kustomization is deleted", time.Minute, func() error {
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNS, Name: "project-shop"}, &kustomizev1.Kustomization{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("project-shop still there (%v)", err)
	})
	checkUntouched(t, c, uids)
}

// TestMigrationToComponentSources switches a running fleet to a source
// per component (platform.yaml fleet.artifacts) and back, on the real
// controllers: each Kustomization keeps its name and moves from the
// fleet's GitRepository to its own OCIRepository (pinned to the artifact
// render pushed to a registry on loopback) and back; nothing that runs is
// deleted or recreated, the chart is not upgraded, nothing is orphaned,
// and the OCIRepositories go with the switch back.
func TestMigrationToComponentSources(t *testing.T) {
	ctx := t.Context()
	chartURL, stopCharts, err := cluster.StartChartRepo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopCharts)
	reg := registrytest.New(t, registrytest.Options{})
	c := cluster.StartT(t)

	apps := t.TempDir()
	copyTree(t, "testdata/migration/specs", apps, chartURL)
	git := gittest.NewServer(t)
	git.CreateRepo(t, "fleet.git", "main", nil)
	bare := git.Path("fleet.git")
	rev1, fleet1 := renderAndCommit(t, apps, bare, nil, "one GitRepository")
	bootstrapFleet(t, c, git.RepoURL("fleet.git"))
	names := []string{"fleet-migration", "shop-orders-api", "shop-orders-db", "shop-web-api", "shop-web-cron", "shop-web-worker"}
	waitKustomizations(t, c, rev1, names)
	uids := liveUIDs(t, c)

	// The switch: one line of platform.yaml.
	platform := filepath.Join(apps, "platform.yaml")
	plain, err := os.ReadFile(platform)
	if err != nil {
		t.Fatal(err)
	}
	withArtifacts := strings.Replace(string(plain), "fleet: {path: fleet}", "fleet: {path: fleet, artifacts: {repository: "+reg.Host()+"/fleet, insecure: true}}", 1)
	if err := os.WriteFile(platform, []byte(withArtifacts), 0o644); err != nil {
		t.Fatal(err)
	}
	rev2, fleet2 := renderAndCommit(t, apps, bare, fleet1, "a source per component")
	requestFetch(t, c)
	waitSources(t, c, rev2, names, len(names)-1)
	checkUntouched(t, c, uids)

	// And back.
	if err := os.WriteFile(platform, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	rev3, _ := renderAndCommit(t, apps, bare, fleet2, "back to one GitRepository")
	requestFetch(t, c)
	waitKustomizations(t, c, rev3, names)
	poll(t, "the OCIRepositories are deleted", time.Minute, func() error {
		var repos sourcev1.OCIRepositoryList
		if err := c.Client.List(ctx, &repos, client.InNamespace(fluxNS)); err != nil {
			return err
		}
		if len(repos.Items) > 0 {
			return fmt.Errorf("%d OCIRepositories left", len(repos.Items))
		}
		return nil
	})
	checkUntouched(t, c, uids)
}

// renderAndCommit runs render in the apps repository and commits what it
// changed in the fleet folder (from the files of before) to the fleet
// repository's main; it returns the commit's revision and the new files.
func renderAndCommit(t *testing.T, apps, bare string, before map[string]string, message string) (string, map[string]string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "render"), ".")
	cmd.Dir = apps
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("render: %v\n%s", err, out)
	}
	after := readTree(t, apps, "fleet")
	change := map[string]string{}
	for p, b := range after {
		if before[p] != b {
			change[p] = b
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			change[p] = "" // deleted
		}
	}
	t.Logf("render changed %q", slices.Sorted(maps.Keys(change)))
	return "main@sha1:" + gittest.CommitFiles(t, bare, "main", message, change), after
}

// bootstrapFleet applies what `flux bootstrap` would: the fleet's
// GitRepository and the root Kustomization of the migration cluster.
func bootstrapFleet(t *testing.T, c *cluster.Cluster, url string) {
	t.Helper()
	for _, o := range []client.Object{
		&sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: fluxNS},
			Spec: sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Minute},
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
		},
		&kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: "fleet-" + migrationCluster, Namespace: fluxNS},
			Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./fleet/clusters/" + migrationCluster, Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}},
		},
	} {
		if err := c.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// waitSources waits until the root Kustomization applied rev, and each
// of the other named Kustomizations reads its own OCIRepository, Ready at
// the artifact that OCIRepository pins; wantRepos OCIRepositories exist.
func waitSources(t *testing.T, c *cluster.Cluster, rev string, names []string, wantRepos int) {
	t.Helper()
	poll(t, "Kustomizations "+strings.Join(names, ", ")+" Ready at their artifacts", 4*time.Minute, func() error {
		var repos sourcev1.OCIRepositoryList
		if err := c.Client.List(t.Context(), &repos, client.InNamespace(fluxNS)); err != nil {
			return err
		}
		if len(repos.Items) != wantRepos {
			return fmt.Errorf("%d OCIRepositories, want %d", len(repos.Items), wantRepos)
		}
		pins := map[string]string{}
		for _, o := range repos.Items {
			if o.Spec.Reference != nil {
				pins[o.Name] = o.Spec.Reference.Digest
			}
		}
		var kss kustomizev1.KustomizationList
		if err := c.Client.List(t.Context(), &kss, client.InNamespace(fluxNS)); err != nil {
			return err
		}
		var got []string
		for _, k := range kss.Items {
			got = append(got, k.Name)
			want := rev
			if k.Name != "fleet-"+migrationCluster {
				if k.Spec.SourceRef.Kind != sourcev1.OCIRepositoryKind || pins[k.Spec.SourceRef.Name] == "" {
					return fmt.Errorf("%s reads %s %s", k.Name, k.Spec.SourceRef.Kind, k.Spec.SourceRef.Name)
				}
				want = pins[k.Spec.SourceRef.Name]
			}
			ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
			if k.Status.LastAppliedRevision != want || ready == nil || ready.Status != metav1.ConditionTrue {
				return fmt.Errorf("%s applied %q, want %q: %s", k.Name, k.Status.LastAppliedRevision, want, conditionText(ready))
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			return fmt.Errorf("Kustomizations %q, want %q", got, names)
		}
		return nil
	})
}

// checkUntouched checks that a change of layout redeployed nothing and left
// nothing behind.
func checkUntouched(t *testing.T, c *cluster.Cluster, uids map[string]types.UID) {
	t.Helper()
	ctx := t.Context()
	// Nothing was deleted or recreated: the Deployments, the ReplicaSets that
	// ran before and the chart's objects keep their UIDs.
	got := liveUIDs(t, c)
	for k, was := range uids {
		if now, ok := got[k]; !ok {
			t.Errorf("%s was deleted by the migration", k)
		} else if now != was {
			t.Errorf("%s was recreated by the migration: %s, was %s", k, now, was)
		}
	}
	// No orphan: every object of the apps and the Namespace belong to a
	// Kustomization that exists and lists it in its inventory.
	inventories := map[string]map[string]bool{}
	var kss kustomizev1.KustomizationList
	if err := c.Client.List(ctx, &kss, client.InNamespace(fluxNS)); err != nil {
		t.Fatal(err)
	}
	for _, k := range kss.Items {
		inv := map[string]bool{}
		if k.Status.Inventory != nil {
			for _, e := range k.Status.Inventory.Entries {
				inv[e.ID] = true
			}
		}
		inventories[k.Name] = inv
	}
	for key, o := range ownedObjects(t, c) {
		owner := o.GetLabels()["kustomize.toolkit.fluxcd.io/name"]
		inv, ok := inventories[owner]
		switch {
		case !ok:
			t.Errorf("%s is labelled as applied by Kustomization %q, which does not exist", key, owner)
		case !inv[inventoryID(t, c, o)]:
			t.Errorf("%s is not in the inventory of its Kustomization %s", key, owner)
		}
	}
	var ns corev1.Namespace
	if err := c.Client.Get(ctx, client.ObjectKey{Name: migrationNS}, &ns); err != nil {
		t.Fatal(err)
	}
	if owner := ns.Labels["kustomize.toolkit.fluxcd.io/name"]; owner != "fleet-"+migrationCluster || ns.DeletionTimestamp != nil {
		t.Errorf("Namespace %s: applied by %q, deletion %v; want the root Kustomization's, not deleted", migrationNS, owner, ns.DeletionTimestamp)
	}
	var hr helmv2.HelmRelease
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: "orders-db"}, &hr); err != nil {
		t.Fatal(err)
	}
	if l := hr.Status.History.Latest(); l == nil || l.Version != 1 {
		t.Errorf("the chart was upgraded or reinstalled by the migration: %+v", l)
	}
}

// copyTree copies the files below src to dst, the chart repository's
// address in place of the placeholder.
func copyTree(t *testing.T, src, dst, chartURL string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(strings.ReplaceAll(string(b), chartPlaceholder, chartURL)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readTree returns the files below root/dir by slash path relative to
// root.
func readTree(t *testing.T, root, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(filepath.Base(rel), ".") { // render's index
			files[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// waitKustomizations waits until exactly the named Kustomizations exist and
// each applied rev and is Ready.
func waitKustomizations(t *testing.T, c *cluster.Cluster, rev string, names []string) {
	t.Helper()
	poll(t, "Kustomizations "+strings.Join(names, ", ")+" Ready at "+rev, 4*time.Minute, func() error {
		var kss kustomizev1.KustomizationList
		if err := c.Client.List(t.Context(), &kss, client.InNamespace(fluxNS)); err != nil {
			return err
		}
		var got []string
		for _, k := range kss.Items {
			if k.DeletionTimestamp == nil {
				got = append(got, k.Name)
			}
			ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
			if k.Status.LastAppliedRevision != rev || ready == nil || ready.Status != metav1.ConditionTrue {
				if slices.Contains(names, k.Name) {
					return fmt.Errorf("%s applied %q: %s", k.Name, k.Status.LastAppliedRevision, conditionText(ready))
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			return fmt.Errorf("Kustomizations %q, want %q", got, names)
		}
		return nil
	})
}

// liveUIDs returns the UIDs of what runs: the Namespace, the Deployments
// and their ReplicaSets, the chart's StatefulSet, Secret and HelmRelease.
func liveUIDs(t *testing.T, c *cluster.Cluster) map[string]types.UID {
	t.Helper()
	ctx := t.Context()
	out := map[string]types.UID{}
	var ns corev1.Namespace
	if err := c.Client.Get(ctx, client.ObjectKey{Name: migrationNS}, &ns); err != nil {
		t.Fatal(err)
	}
	out["Namespace/"+ns.Name] = ns.UID
	lists := []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.ReplicaSetList{}, &appsv1.StatefulSetList{}, &corev1.SecretList{}, &helmv2.HelmReleaseList{}}
	for _, l := range lists {
		if err := c.Client.List(ctx, l, client.InNamespace(migrationNS)); err != nil {
			t.Fatal(err)
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			o := it.(client.Object)
			kind := strings.TrimSuffix(fmt.Sprintf("%T", l), "List")
			out[kind[strings.LastIndexByte(kind, '.')+1:]+"/"+o.GetName()] = o.GetUID()
		}
	}
	for _, want := range []string{"Deployment/web-api", "Deployment/web-worker", "Deployment/web-cron", "Deployment/orders-api", "StatefulSet/orders-db", "Secret/orders-db", "HelmRelease/orders-db"} {
		if _, ok := out[want]; !ok {
			t.Fatalf("no %s in namespace %s: %v", want, migrationNS, slices.Sorted(maps.Keys(out)))
		}
	}
	return out
}

// ownedObjects returns the objects Flux applied in the apps' namespace, and
// the Namespace, by kind/name.
func ownedObjects(t *testing.T, c *cluster.Cluster) map[string]client.Object {
	t.Helper()
	ctx := t.Context()
	out := map[string]client.Object{}
	lists := []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &helmv2.HelmReleaseList{}, &sourcev1.HelmRepositoryList{}}
	for _, l := range lists {
		if err := c.Client.List(ctx, l, client.InNamespace(migrationNS), client.HasLabels{"kustomize.toolkit.fluxcd.io/name"}); err != nil {
			t.Fatal(err)
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			o := it.(client.Object)
			out[fmt.Sprintf("%T/%s", o, o.GetName())] = o
		}
	}
	if len(out) != 8 { // 4 Deployments, 2 Services, the HelmRelease and its HelmRepository
		t.Errorf("%d objects applied by Flux in %s, want 8: %q", len(out), migrationNS, slices.Sorted(maps.Keys(out)))
	}
	ns := &corev1.Namespace{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: migrationNS}, ns); err != nil {
		t.Fatal(err)
	}
	out["Namespace/"+migrationNS] = ns
	return out
}

// inventoryID is how a Kustomization's inventory names an object:
// <namespace>_<name>_<group>_<kind>.
func inventoryID(t *testing.T, c *cluster.Cluster, o client.Object) string {
	t.Helper()
	gvk, err := c.Client.GroupVersionKindFor(o)
	if err != nil {
		t.Fatal(err)
	}
	return o.GetNamespace() + "_" + o.GetName() + "_" + gvk.Group + "_" + gvk.Kind
}

// requestFetch asks source-controller to fetch the fleet now.
func requestFetch(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	var repo sourcev1.GitRepository
	if err := c.Client.Get(t.Context(), client.ObjectKey{Namespace: fluxNS, Name: "flux-system"}, &repo); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(repo.DeepCopy())
	repo.Annotations = map[string]string{meta.ReconcileRequestAnnotation: time.Now().Format(time.RFC3339Nano)}
	if err := c.Client.Patch(t.Context(), &repo, patch); err != nil {
		t.Fatal(err)
	}
}

// poll calls check every half second until it returns nil, or fails the
// test after timeout with check's last error.
func poll(t *testing.T, what string, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || t.Context().Err() != nil {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
