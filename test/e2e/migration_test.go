package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// allNamespaces lists objects of every namespace: the root Kustomization
// is in flux-system, the apps' Flux objects in their project's namespace
// (in flux-system, in a fleet rendered before that); the tests' names are
// distinct.
var allNamespaces = client.InNamespace("")

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
// wrote, then what render writes today from the same specs over it, twice,
// on the real controllers: Flux takes the change without deleting anything
// that runs (every object keeps its UID, every ReplicaSet stays, the chart
// stays at its first release), the project Kustomization goes and its
// Namespace stays, applied by the root Kustomization, the apps'
// Kustomizations move from flux-system to the project's namespace (the
// first render keeps them with prune: false, the second moves them), and
// nothing is left that no Kustomization owns.
//
// It runs without Flux's lockdown: the previous layout's Flux objects name
// no service account.
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
	c := cluster.StartT(t, cluster.WithoutLockdown(), cluster.WithFluxArgs("kustomize-controller", "--requeue-dependency=2s"), cluster.WithFluxArgs("helm-controller", "--requeue-dependency=2s"))

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

	// render over it, as a platform team upgrading fleetwright would: the
	// first render keeps the apps' Kustomizations in flux-system, with
	// prune: false.
	rev2, step1, out := renderCommit(t, apps, bare, before, "re-rendered")
	if !strings.Contains(out, "render again") {
		t.Errorf("the first render does not say to render again:\n%s", out)
	}
	requestFetch(t, c)
	newKS := []string{"fleet-migration", "shop-orders-api", "shop-orders-db", "shop-web-api", "shop-web-cron", "shop-web-worker"}
	waitKustomizations(t, c, rev2, newKS)
	checkNamespaces(t, c, newKS[1:], fluxNS, false)

	// The project Kustomization is gone, once its finalizer ran.
	poll(t, "the project Kustomization is deleted", time.Minute, func() error {
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNS, Name: "project-shop"}, &kustomizev1.Kustomization{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("project-shop still there (%v)", err)
	})
	checkUntouched(t, c, uids)

	// The second render moves them to the project's namespace, run as its
	// service account; the root deletes the old ones, which delete nothing.
	rev3, _, out := renderCommit(t, apps, bare, step1, "moved to the project's namespace")
	if strings.Contains(out, "render again") {
		t.Errorf("the second render still says to render again:\n%s", out)
	}
	requestFetch(t, c)
	waitKustomizations(t, c, rev3, newKS)
	checkNamespaces(t, c, newKS[1:], migrationNS, true)
	checkUntouched(t, c, uids)
}

// checkNamespaces checks that the named Kustomizations are in namespace
// ns, and none of them elsewhere (a deleted one's finalizer has run);
// those in the project's namespace run as its service account (moved),
// those in flux-system do not prune.
func checkNamespaces(t *testing.T, c *cluster.Cluster, names []string, ns string, moved bool) {
	t.Helper()
	poll(t, "Kustomizations "+strings.Join(names, ", ")+" only in "+ns, time.Minute, func() error {
		var kss kustomizev1.KustomizationList
		if err := c.Client.List(t.Context(), &kss, allNamespaces); err != nil {
			return err
		}
		for _, k := range kss.Items {
			if !slices.Contains(names, k.Name) {
				continue
			}
			if k.Namespace != ns {
				return fmt.Errorf("Kustomization %s/%s is still there", k.Namespace, k.Name)
			}
			if moved && k.Spec.ServiceAccountName != layout.ProjectServiceAccount || !moved && k.Spec.Prune {
				t.Errorf("Kustomization %s/%s: runs as %q, prune %v", k.Namespace, k.Name, k.Spec.ServiceAccountName, k.Spec.Prune)
			}
		}
		return nil
	})
}

// TestMigrationToComponentSources switches a running fleet to a source
// per component and per project (platform.yaml fleet.artifacts) and back,
// on the real controllers, as a platform team does it: render, wait until
// Flux applied the commit, render again, and one render back.
//
//  1. The first render with fleet.artifacts keeps the apps' Flux objects in
//     clusters/<c>/apps, each marked kustomize.toolkit.fluxcd.io/prune:
//     disabled (render warns to render again); each component's
//     Kustomization moves to its own OCIRepository.
//  2. The second moves them to apps/<c>/<p>/_flux, the project's artifact,
//     applied by Kustomization project-<p> from OCIRepository project-<p>:
//     the root does not prune the marked objects, the project's
//     Kustomization takes them over and its apply drops the mark.
//  3. Without fleet.artifacts the root applies the app files again and
//     prunes project-<p>, whose finalizer deletes only the OCIRepositories
//     still labelled as its own.
//
// At every step nothing that runs is deleted or recreated, the chart is not
// upgraded, nothing is orphaned, and no app Kustomization is ever deleted
// (a watch sees each of their changes). Last, a fleet moved in one render
// (rendered from an empty fleet folder, so render cannot see that the root
// applies the app files) shows why the first step is there: the root
// prunes the app Kustomizations, and their workloads go with them.
func TestMigrationToComponentSources(t *testing.T) {
	ctx := t.Context()
	started := time.Now()
	chartURL, stopCharts, err := cluster.StartChartRepo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopCharts)
	reg := registrytest.New(t, registrytest.Options{})
	// A dependency not Ready yet is retried after 2s rather than 30s: each
	// switch of source makes the dependents wait for their dependencies.
	// The fleet reads the fleet's GitRepository from the project's
	// namespace at first: no lockdown.
	c := cluster.StartT(t, cluster.WithoutLockdown(), cluster.WithFluxArgs("kustomize-controller", "--requeue-dependency=2s"), cluster.WithFluxArgs("helm-controller", "--requeue-dependency=2s"))

	apps := t.TempDir()
	copyTree(t, "testdata/migration/specs", apps, chartURL)
	git := gittest.NewServer(t)
	git.CreateRepo(t, "fleet.git", "main", nil)
	bare := git.Path("fleet.git")
	rev1, fleet1 := renderAndCommit(t, apps, bare, nil, "one GitRepository")
	bootstrapFleet(t, c, git.RepoURL("fleet.git"))
	appKS := []string{"shop-orders-api", "shop-orders-db", "shop-web-api", "shop-web-cron", "shop-web-worker"}
	root := "fleet-" + migrationCluster
	names := append([]string{root}, appKS...)
	waitKustomizations(t, c, rev1, names)
	uids := liveUIDs(t, c)
	kw := watchKustomizations(t, c, appKS)
	phase := time.Now()
	t.Logf("the Git layout is applied at %s (%s since the start)", rev1, phase.Sub(started).Round(time.Second))
	elapsed := func() time.Duration {
		d := time.Since(phase).Round(100 * time.Millisecond)
		phase = time.Now()
		return d
	}

	// Step 1: one line of platform.yaml, and the render that keeps the
	// apps' Flux objects where the root applies them.
	platform := filepath.Join(apps, "platform.yaml")
	plain, err := os.ReadFile(platform)
	if err != nil {
		t.Fatal(err)
	}
	withArtifacts := strings.Replace(string(plain), "fleet: {path: fleet}", "fleet: {path: fleet, artifacts: {repository: "+reg.Host()+"/fleet, insecure: true}}", 1)
	if err := os.WriteFile(platform, []byte(withArtifacts), 0o644); err != nil {
		t.Fatal(err)
	}
	rev2, fleet2, out := renderCommit(t, apps, bare, fleet1, "a source per component: kept from pruning")
	if !strings.Contains(out, "render again") {
		t.Errorf("the first render with fleet.artifacts does not say to render again:\n%s", out)
	}
	checkFleetLayout(t, fleet2, false, true)
	requestFetch(t, c)
	waitSources(t, c, rev2, names, len(appKS))
	checkFluxObjects(t, c, fluxOwners(appKS, root, true), true)
	checkUntouched(t, c, uids)
	repoUIDs := ociRepositoryUIDs(t, c)
	t.Logf("step 1: Flux applied %s: each component reads its own OCIRepository, every app Flux object is kept from pruning (%s)", rev2, elapsed())

	// Step 2: the same render again, once Flux has applied the first.
	rev3, fleet3, out := renderCommit(t, apps, bare, fleet2, "a source per project")
	if strings.Contains(out, "render again") {
		t.Errorf("the second render with fleet.artifacts still says to render again:\n%s", out)
	}
	checkFleetLayout(t, fleet3, true, false)
	requestFetch(t, c)
	project := "project-" + migrationNS
	withProject := append(slices.Clone(names), project)
	slices.Sort(withProject)
	waitSources(t, c, rev3, withProject, len(appKS)+1)
	owners := fluxOwners(appKS, project, true)
	owners["Kustomization/"+project], owners["OCIRepository/"+project] = root, root
	checkFluxObjects(t, c, owners, false)
	for name, was := range repoUIDs {
		if now := ociRepositoryUIDs(t, c)[name]; now != was {
			t.Errorf("OCIRepository %s was recreated by the move: %s, was %s", name, now, was)
		}
	}
	checkUntouched(t, c, uids)
	t.Logf("step 2: Flux applied %s: %s applies the apps' Flux objects, the mark is gone (%s)", rev3, project, elapsed())

	// And back: one render.
	if err := os.WriteFile(platform, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	rev4, fleet4, _ := renderCommit(t, apps, bare, fleet3, "back to one GitRepository")
	checkFleetLayout(t, fleet4, false, false)
	requestFetch(t, c)
	waitKustomizations(t, c, rev4, names)
	poll(t, project+" and the OCIRepositories are deleted", time.Minute, func() error {
		var repos sourcev1.OCIRepositoryList
		if err := c.Client.List(ctx, &repos, allNamespaces); err != nil {
			return err
		}
		if len(repos.Items) > 0 {
			return fmt.Errorf("%d OCIRepositories left", len(repos.Items))
		}
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: project}, &kustomizev1.Kustomization{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("Kustomization %s still there (%v)", project, err)
		}
		return nil
	})
	checkFluxObjects(t, c, fluxOwners(appKS, root, false), false)
	checkUntouched(t, c, uids)
	kw.check()
	t.Logf("back: Flux applied %s: the root applies the apps' Flux objects, %s and every OCIRepository are gone (%s)", rev4, project, elapsed())

	// Why two steps: the same switch in one render deletes what runs; a
	// new watch must see it (which shows the one above would have).
	kw = watchKustomizations(t, c, appKS)
	if err := os.RemoveAll(filepath.Join(apps, "fleet")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(platform, []byte(withArtifacts), 0o644); err != nil {
		t.Fatal(err)
	}
	rev5, fleet5, out := renderCommit(t, apps, bare, fleet4, "a source per project in one step")
	if strings.Contains(out, "render again") {
		t.Errorf("a render into an empty fleet folder says to render again:\n%s", out)
	}
	checkFleetLayout(t, fleet5, true, false)
	requestFetch(t, c)
	poll(t, "the root prunes the app Kustomizations and their Deployments", time.Minute, func() error {
		if !kw.saw("shop-web-api") {
			return errors.New("Kustomization shop-web-api is not deleted")
		}
		var d appsv1.Deployment
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: "web-api"}, &d)
		if err == nil && d.UID == uids["Deployment/web-api"] && d.DeletionTimestamp == nil {
			return errors.New("Deployment web-api still runs")
		} else if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
	t.Logf("one step: Flux applied %s: the root pruned the app Kustomizations and Deployment web-api with them (%s)", rev5, elapsed())
}

// renderAndCommit runs render in the apps repository and commits what it
// changed in the fleet folder (from the files of before) to the fleet
// repository's main; it returns the commit's revision and the new files.
func renderAndCommit(t *testing.T, apps, bare string, before map[string]string, message string) (string, map[string]string) {
	t.Helper()
	rev, after, _ := renderCommit(t, apps, bare, before, message)
	return rev, after
}

// renderCommit is renderAndCommit that also returns what render printed.
func renderCommit(t *testing.T, apps, bare string, before map[string]string, message string) (string, map[string]string, string) {
	t.Helper()
	return renderRunCommit(t, apps, bare, before, message, ".")
}

// renderRunCommit is renderCommit with render's arguments.
func renderRunCommit(t *testing.T, apps, bare string, before map[string]string, message string, args ...string) (string, map[string]string, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "render"), args...)
	cmd.Dir = apps
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
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
	return "main@sha1:" + gittest.CommitFiles(t, bare, "main", message, change), after, string(out)
}

// bootstrapFleet applies what `flux bootstrap` would: the fleet's
// GitRepository and the root Kustomization of the migration cluster, run
// as kustomize-controller, as deploy/flux/kustomization.yaml sets it.
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
				SourceRef:          kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"},
				ServiceAccountName: cluster.RootServiceAccount},
		},
	} {
		if err := c.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// waitSources waits until the root Kustomization applied rev, and each
// of the other named Kustomizations reads an OCIRepository (its own, or its
// project's), Ready at the artifact that OCIRepository pins; wantRepos
// OCIRepositories exist.
func waitSources(t *testing.T, c *cluster.Cluster, rev string, names []string, wantRepos int) {
	t.Helper()
	poll(t, "Kustomizations "+strings.Join(names, ", ")+" Ready at their artifacts", 4*time.Minute, func() error {
		var repos sourcev1.OCIRepositoryList
		if err := c.Client.List(t.Context(), &repos, allNamespaces); err != nil {
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
		if err := c.Client.List(t.Context(), &kss, allNamespaces); err != nil {
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
	// No orphan: every object of the apps (of any kind) and the Namespace
	// belong to a Kustomization that exists and lists it in its inventory.
	inventories := map[string]map[string]bool{}
	var kss kustomizev1.KustomizationList
	if err := c.Client.List(ctx, &kss, allNamespaces); err != nil {
		t.Fatal(err)
	}
	for _, k := range kss.Items {
		inv := map[string]bool{}
		if k.Status.Inventory != nil {
			for _, e := range k.Status.Inventory.Entries {
				inv[e.ID] = true
			}
		}
		inventories[k.Namespace+"/"+k.Name] = inv
	}
	applied := appliedObjects(t, c, migrationNS)
	for key, o := range ownedObjects(t, c) {
		id := inventoryID(t, c, o)
		if _, ok := applied[id]; !ok && o.GetNamespace() != "" {
			t.Errorf("%s is not among the objects listed as applied in %s", key, migrationNS)
		}
		applied[id] = o // and the Namespace
	}
	for id, o := range applied {
		owner := o.GetLabels()[kustomizeNamespace] + "/" + o.GetLabels()[kustomizeName]
		inv, ok := inventories[owner]
		switch {
		case !ok:
			t.Errorf("%s is labelled as applied by Kustomization %q, which does not exist", id, owner)
		case !inv[id]:
			t.Errorf("%s is not in the inventory of its Kustomization %s", id, owner)
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
	for p, b := range golden.ReadFiles(t, filepath.Join(root, dir)) {
		if !strings.HasPrefix(path.Base(p), ".") { // render's index
			files[path.Join(dir, p)] = b
		}
	}
	return files
}

// waitKustomizations waits until exactly the named Kustomizations exist and
// each applied rev and is Ready.
func waitKustomizations(t *testing.T, c *cluster.Cluster, rev string, names []string) {
	t.Helper()
	poll(t, "Kustomizations "+strings.Join(names, ", ")+" Ready at "+rev, 4*time.Minute, func() error {
		var kss kustomizev1.KustomizationList
		if err := c.Client.List(t.Context(), &kss, allNamespaces); err != nil {
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

// appliedObjects returns every object of namespace ns, of each kind the
// API server lists, that is labelled as applied by a Kustomization and
// not made by a controller, by its inventory ID.
func appliedObjects(t *testing.T, c *cluster.Cluster, ns string) map[string]client.Object {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]client.Object{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			var items metav1.PartialObjectMetadataList
			items.SetGroupVersionKind(gv.WithKind(r.Kind + "List"))
			if err := c.Client.List(t.Context(), &items, client.InNamespace(ns), client.HasLabels{kustomizeName}); err != nil {
				t.Fatalf("listing %s %s: %v", l.GroupVersion, r.Name, err)
			}
			for i := range items.Items {
				o := &items.Items[i]
				// What a controller made from an applied object carries its
				// labels: EndpointSlices (owned by their Service) and
				// Endpoints (named as it).
				if metav1.GetControllerOf(o) != nil || gv.Group == "" && r.Kind == "Endpoints" {
					continue
				}
				out[ns+"_"+o.Name+"_"+gv.Group+"_"+r.Kind] = o
			}
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

// The files of the migration fleet whose place changes with a source per
// project, relative to the apps repository.
var (
	migrationAppFiles = []string{"fleet/clusters/migration/apps/shop-orders.yaml", "fleet/clusters/migration/apps/shop-web.yaml"}
	migrationFluxFile = []string{"fleet/apps/migration/shop/_flux/orders.yaml", "fleet/apps/migration/shop/_flux/web.yaml"}
	migrationProject  = "fleet/clusters/migration/projects/shop.yaml"
)

// checkFleetLayout checks where a render put the apps' Flux objects: in
// the project's Flux folder, with the project's source in its file in the
// cluster folder (moved), or in the cluster folder; and whether each of
// them is kept from pruning (marked).
func checkFleetLayout(t *testing.T, files map[string]string, moved, marked bool) {
	t.Helper()
	here, gone := migrationAppFiles, migrationFluxFile
	wantProject := []string{"Namespace", "ServiceAccount", "RoleBinding"}
	if moved {
		here, gone = gone, here
		wantProject = append(wantProject, "OCIRepository", "Kustomization")
	}
	for _, p := range gone {
		if _, ok := files[p]; ok {
			t.Errorf("the fleet has %s", p)
		}
	}
	for _, p := range here {
		data, ok := files[p]
		if !ok {
			t.Errorf("the fleet has no %s", p)
			continue
		}
		for _, o := range documents(t, p, data) {
			if got := o.GetAnnotations()[layout.PruneAnnotation] == layout.PruneDisabled; got != marked {
				t.Errorf("%s: %s %s kept from pruning: %v, want %v", p, o.GetKind(), o.GetName(), got, marked)
			}
		}
	}
	var kinds []string
	for _, o := range documents(t, migrationProject, files[migrationProject]) {
		kinds = append(kinds, o.GetKind())
	}
	if !slices.Equal(kinds, wantProject) {
		t.Errorf("%s holds %q, want %q", migrationProject, kinds, wantProject)
	}
}

// documents decodes the objects of a YAML file.
func documents(t *testing.T, name, data string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if u.Object != nil {
			out = append(out, u)
		}
	}
}

// fluxOwners is which Kustomization applies each app Flux object, by
// kind/name: the apps' Kustomizations and, with a source per component,
// their OCIRepositories (named as they are).
func fluxOwners(names []string, owner string, repos bool) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m["Kustomization/"+n] = owner
		if repos {
			m["OCIRepository/"+n] = owner
		}
	}
	return m
}

// checkFluxObjects checks the Flux objects of the fleet (every Kustomization
// and OCIRepository but the root Kustomization, which bootstrapFleet made):
// exactly those of want exist, none being deleted, each labelled as applied
// by the Kustomization want names and in its inventory, and each kept from
// pruning or not (marked).
func checkFluxObjects(t *testing.T, c *cluster.Cluster, want map[string]string, marked bool) {
	t.Helper()
	ctx := t.Context()
	var kss kustomizev1.KustomizationList
	var repos sourcev1.OCIRepositoryList
	if err := c.Client.List(ctx, &kss, allNamespaces); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.List(ctx, &repos, allNamespaces); err != nil {
		t.Fatal(err)
	}
	inventories := map[string]map[string]bool{}
	namespaces := map[string]string{} // of the Kustomizations, by name
	got := map[string]client.Object{}
	for i := range kss.Items {
		k := &kss.Items[i]
		namespaces[k.Name] = k.Namespace
		inv := map[string]bool{}
		if k.Status.Inventory != nil {
			for _, e := range k.Status.Inventory.Entries {
				inv[e.ID] = true
			}
		}
		inventories[k.Name] = inv
		if k.Name != "fleet-"+migrationCluster {
			got["Kustomization/"+k.Name] = k
		}
	}
	for i := range repos.Items {
		got["OCIRepository/"+repos.Items[i].Name] = &repos.Items[i]
	}
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
		t.Errorf("Flux objects %q, want %q", g, w)
	}
	for key, o := range got {
		owner, ownerNS := o.GetLabels()[kustomizeName], o.GetLabels()[kustomizeNamespace]
		switch {
		case want[key] == "":
		case owner != want[key] || ownerNS != namespaces[owner]:
			t.Errorf("%s is labelled as applied by Kustomization %s/%s, want %s/%s", key, ownerNS, owner, namespaces[want[key]], want[key])
		case !inventories[owner][inventoryID(t, c, o)]:
			t.Errorf("%s is not in the inventory of its Kustomization %s", key, owner)
		}
		if o.GetDeletionTimestamp() != nil {
			t.Errorf("%s is being deleted", key)
		}
		if got := o.GetAnnotations()[layout.PruneAnnotation] == layout.PruneDisabled; got != marked {
			t.Errorf("%s kept from pruning: %v, want %v", key, got, marked)
		}
	}
}

// ociRepositoryUIDs returns the UIDs of the OCIRepositories by name.
func ociRepositoryUIDs(t *testing.T, c *cluster.Cluster) map[string]types.UID {
	t.Helper()
	var repos sourcev1.OCIRepositoryList
	if err := c.Client.List(t.Context(), &repos, allNamespaces); err != nil {
		t.Fatal(err)
	}
	m := map[string]types.UID{}
	for _, o := range repos.Items {
		m[o.Name] = o.UID
	}
	return m
}

// kustomizationWatch watches the fleet's Kustomizations
// for any deletion, mark of deletion or new UID of the named ones, however
// briefly it lasts.
type kustomizationWatch struct {
	t     *testing.T
	uids  map[string]types.UID // the named Kustomizations' UIDs when the watch began
	start time.Time
	stop  context.CancelFunc
	done  chan struct{}

	mu      sync.Mutex
	events  int
	bad     []string // what the test reports
	deleted []string // the names of bad
}

// watchKustomizations starts watching the named Kustomizations, which must
// exist; check stops the watch and reports what it saw.
func watchKustomizations(t *testing.T, c *cluster.Cluster, names []string) *kustomizationWatch {
	t.Helper()
	wc, err := client.NewWithWatch(c.Config, client.Options{Scheme: c.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	w := &kustomizationWatch{t: t, uids: map[string]types.UID{}, start: time.Now(), stop: cancel, done: make(chan struct{})}
	var list kustomizev1.KustomizationList
	if err := wc.List(ctx, &list, allNamespaces); err != nil {
		t.Fatal(err)
	}
	for _, k := range list.Items {
		if slices.Contains(names, k.Name) {
			w.uids[k.Name] = k.UID
		}
	}
	if len(w.uids) != len(names) {
		t.Fatalf("watching Kustomizations %q: only %d exist", names, len(w.uids))
	}
	go w.run(ctx, wc, list.ResourceVersion)
	t.Cleanup(func() {
		cancel()
		<-w.done
	})
	return w
}

// run follows the watch from resourceVersion rv; when the server ends it
// (a timeout, or a resourceVersion too old), it lists again and goes on
// from there, so no change is missed.
func (w *kustomizationWatch) run(ctx context.Context, wc client.WithWatch, rv string) {
	defer close(w.done)
	for ctx.Err() == nil {
		wi, err := wc.Watch(ctx, &kustomizev1.KustomizationList{}, allNamespaces, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err == nil {
			for ev := range wi.ResultChan() {
				k, ok := ev.Object.(*kustomizev1.Kustomization)
				if !ok { // an error: list again
					break
				}
				rv = k.ResourceVersion
				w.observe(ev.Type, k)
			}
			wi.Stop()
		}
		if ctx.Err() != nil {
			return
		}
		var list kustomizev1.KustomizationList
		if err := wc.List(ctx, &list, allNamespaces); err != nil {
			continue
		}
		seen := map[string]bool{}
		for i := range list.Items {
			seen[list.Items[i].Name] = true
			w.observe(watch.Modified, &list.Items[i])
		}
		for name := range w.uids {
			if !seen[name] {
				w.observe(watch.Deleted, &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, UID: w.uids[name]}})
			}
		}
		rv = list.ResourceVersion
	}
}

func (w *kustomizationWatch) observe(typ watch.EventType, k *kustomizev1.Kustomization) {
	was, ok := w.uids[k.Name]
	if !ok {
		return
	}
	var bad string
	switch {
	case typ == watch.Deleted:
		bad = "deleted"
	case k.UID != was:
		bad = fmt.Sprintf("recreated (UID %s, was %s)", k.UID, was)
	case k.DeletionTimestamp != nil:
		bad = "marked for deletion"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if bad != "" {
		w.bad = append(w.bad, fmt.Sprintf("Kustomization %s %s, %s after the watch began", k.Name, bad, time.Since(w.start).Round(100*time.Millisecond)))
		w.deleted = append(w.deleted, k.Name)
	}
}

// saw reports whether the watch saw the named Kustomization deleted (or
// marked for deletion, or recreated).
func (w *kustomizationWatch) saw(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.deleted, name)
}

// check stops the watch and fails the test with each deletion it saw.
func (w *kustomizationWatch) check() {
	w.t.Helper()
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.bad {
		w.t.Error(b)
	}
	w.t.Logf("the watch saw %d changes of the app Kustomizations in %s, %d of them deletions", w.events, time.Since(w.start).Round(time.Second), len(w.bad))
}
