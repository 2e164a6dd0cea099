package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// TestDependencyAppliesFirst deploys an app with a source per component
// (fleet.artifacts): db, and api with depends_on: [db]. One commit then
// changes both, while db's Kustomization is suspended, so that Flux cannot
// apply db's new artifact: api's new artifact must wait, although db is
// Ready (at its previous artifact), because api's dependsOn names the
// artifact of db that the commit pins. Resumed, db applies its artifact and
// api follows. Without the pin kustomize-controller checks only that db is
// Ready, and applies api's new version first.
func TestDependencyAppliesFirst(t *testing.T) {
	ctx := t.Context()
	reg := registrytest.New(t, registrytest.Options{})
	c := cluster.StartT(t, cluster.WithFluxArgs("kustomize-controller", "--requeue-dependency=2s"))

	apps := t.TempDir()
	spec := func(version string) {
		t.Helper()
		app := fmt.Sprintf(`name: web
components:
  - name: db
    type: workload
    workload_spec:
      image: registry.migration.test/shop/web-db:%[1]s
      port: 5432
  - name: api
    type: workload
    depends_on: [db]
    workload_spec:
      image: registry.migration.test/shop/web-api:%[1]s
      port: 8080
`, version)
		writeApps(t, apps, reg.Host(), app)
	}
	git := gittest.NewServer(t)
	git.CreateRepo(t, "fleet.git", "main", nil)
	bare := git.Path("fleet.git")
	const dbKS, apiKS = migrationNS + "-web-db", migrationNS + "-web-api"
	names := []string{"fleet-" + migrationCluster, "project-" + migrationNS, apiKS, dbKS}

	spec("v1")
	rev1, fleet1 := renderAndCommit(t, apps, bare, nil, "the app")
	bootstrapFleet(t, c, git.RepoURL("fleet.git"))
	waitSources(t, c, rev1, names, 3)

	suspend := func(on bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization","spec":{"suspend":%t}}`, on)
		k := &kustomizev1.Kustomization{}
		k.Name, k.Namespace = dbKS, migrationNS
		if err := c.Client.Patch(ctx, k, client.RawPatch(types.ApplyPatchType, []byte(patch)), client.FieldOwner("e2e-suspend"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
	}
	image := func(name string) string {
		t.Helper()
		var d appsv1.Deployment
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: name}, &d); err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}

	suspend(true)
	spec("v2")
	_, fleet2 := renderAndCommit(t, apps, bare, fleet1, "db and api v2")
	requestFetch(t, c)
	flux := "fleet/apps/" + migrationCluster + "/" + migrationNS + "/_flux/web.yaml"
	apiPin, dbPin := pinOf(t, fleet2, flux, apiKS), pinOf(t, fleet2, flux, dbKS)

	// api has its new artifact and waits for db's.
	poll(t, apiKS+" waiting for "+dbKS+"'s new artifact", 3*time.Minute, func() error {
		if img := image("web-api"); img != "registry.migration.test/shop/web-api:v1" {
			t.Fatalf("api runs %s while db's new artifact is not applied: the dependency's order was not kept", img)
		}
		var src sourcev1.OCIRepository
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: apiKS}, &src); err != nil {
			return err
		}
		if src.Status.Artifact == nil || src.Status.Artifact.Revision != apiPin {
			return fmt.Errorf("api's source has not pulled %s yet", apiPin)
		}
		var k kustomizev1.Kustomization
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: apiKS}, &k); err != nil {
			return err
		}
		if len(k.Spec.DependsOn) != 1 || !strings.Contains(k.Spec.DependsOn[0].ReadyExpr, "'"+dbPin+"'") {
			return fmt.Errorf("api's dependsOn is %v, want db's artifact %s named", k.Spec.DependsOn, dbPin)
		}
		ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
		if ready == nil || ready.Reason != meta.DependencyNotReadyReason {
			return fmt.Errorf("%s", conditionText(ready))
		}
		return nil
	})
	// Several dependency retries later, api still runs v1.
	time.Sleep(6 * time.Second)
	if img := image("web-api"); img != "registry.migration.test/shop/web-api:v1" {
		t.Fatalf("api runs %s while db's new artifact is not applied: the dependency's order was not kept", img)
	}
	if img := image("web-db"); img != "registry.migration.test/shop/web-db:v1" {
		t.Fatalf("db runs %s while suspended", img)
	}

	// db applies its new artifact, and api follows.
	suspend(false)
	poll(t, apiKS+" and "+dbKS+" at their new artifacts", 3*time.Minute, func() error {
		for name, pin := range map[string]string{apiKS: apiPin, dbKS: dbPin} {
			var k kustomizev1.Kustomization
			if err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: name}, &k); err != nil {
				return err
			}
			ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
			if k.Status.LastAppliedRevision != pin || ready == nil || ready.Status != metav1.ConditionTrue {
				return fmt.Errorf("%s applied %q, want %q: %s", name, k.Status.LastAppliedRevision, pin, conditionText(ready))
			}
		}
		return nil
	})
	for name, want := range map[string]string{"web-api": "registry.migration.test/shop/web-api:v2", "web-db": "registry.migration.test/shop/web-db:v2"} {
		if img := image(name); img != want {
			t.Errorf("%s runs %s, want %s", name, img, want)
		}
	}
}
