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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// cancelGate is the kustomize-controller flag docs/fleet.md recommends: a
// health check in progress stops when the Kustomization's source gets a
// new revision.
const cancelGate = "--feature-gates=CancelHealthCheckOnNewRevision=true"

// TestFixCancelsHealthCheck deploys an app with a source per component
// (fleet.artifacts), breaks it with a long timeout (its pod can never be
// scheduled), and, while Flux's health check of the broken revision runs,
// commits the fix, which also restores the timeout: the component's folder
// and its Kustomization's spec change in one commit, the case where
// kustomize-controller may start on the new spec with the artifact it
// has. With the recommended gate the fix is applied when its artifact
// arrives; without it, the broken revision's health check holds the
// Kustomization for its whole timeout (30 minutes here, far past the
// test's wait).
func TestFixCancelsHealthCheck(t *testing.T) {
	ctx := t.Context()
	reg := registrytest.New(t, registrytest.Options{})
	c := cluster.StartT(t, cluster.WithFluxArgs("kustomize-controller", cancelGate))

	apps := t.TempDir()
	spec := func(cpu, timeout string) {
		t.Helper()
		app := fmt.Sprintf(`name: web
timeout: %s
components:
  - name: api
    type: workload
    workload_spec:
      image: registry.migration.test/shop/web-api:v1
      port: 8080
      resources: {requests: {cpu: %s, memory: 16Mi}}
`, timeout, cpu)
		writeApps(t, apps, reg.Host(), app)
	}
	git := gittest.NewServer(t)
	git.CreateRepo(t, "fleet.git", "main", nil)
	bare := git.Path("fleet.git")
	const ks = migrationNS + "-web-api"
	names := []string{"fleet-" + migrationCluster, "project-" + migrationNS, ks}

	spec("10m", "1m")
	rev1, fleet1 := renderAndCommit(t, apps, bare, nil, "the app")
	bootstrapFleet(t, c, git.RepoURL("fleet.git"))
	waitSources(t, c, rev1, names, 2)

	// Broken: 200 CPUs, which no node has, and a 30-minute timeout.
	spec("200", "30m")
	_, fleet2 := renderAndCommit(t, apps, bare, fleet1, "200 CPUs")
	requestFetch(t, c)
	broken := pinOf(t, fleet2, "fleet/apps/"+migrationCluster+"/"+migrationNS+"/_flux/web.yaml", ks)
	poll(t, ks+" health-checking the broken artifact", 4*time.Minute, func() error {
		var k kustomizev1.Kustomization
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: ks}, &k); err != nil {
			return err
		}
		r := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReconcilingCondition)
		if k.Status.LastAttemptedRevision != broken || r == nil || !strings.HasPrefix(r.Message, "Running health checks") {
			return fmt.Errorf("attempted %q, want %q; %s", k.Status.LastAttemptedRevision, broken, conditionText(r))
		}
		return nil
	})

	// The fix: back to 10m of CPU and the 1-minute timeout, in one commit.
	spec("10m", "1m")
	rev3, _ := renderAndCommit(t, apps, bare, fleet2, "the fix")
	requestFetch(t, c)
	fetched := time.Now()
	waitSources(t, c, rev3, names, 2)
	var d appsv1.Deployment
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: migrationNS, Name: "web-api"}, &d); err != nil {
		t.Fatal(err)
	}
	if cpu := d.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String(); cpu != "10m" {
		t.Errorf("the Deployment asks for %s of CPU after the fix, want 10m", cpu)
	}
	t.Logf("the fix was applied and healthy %s after its fetch was requested; the broken revision's health check had a 30m timeout",
		time.Since(fetched).Round(100*time.Millisecond))
}

// writeApps writes the apps folder of a one-app test: platform.yaml, with
// a source per component in the registry at registry (host:port), and the
// web app's spec in the migration namespace's project.
func writeApps(t *testing.T, apps, registry, app string) {
	t.Helper()
	platform := "apps_domain: apps.migration.test\nclusters:\n  - name: " + migrationCluster + "\nbuild: {pin: false}\n" +
		"fleet: {path: fleet, artifacts: {repository: " + registry + "/fleet, insecure: true}}\n"
	golden.WriteFiles(t, apps, map[string]string{"platform.yaml": platform, "apps/" + migrationNS + "/web/app.yaml": app})
}

// pinOf returns the artifact revision (sha256:<hex>) that the fleet file
// pins for the OCIRepository name.
func pinOf(t *testing.T, fleet map[string]string, file, name string) string {
	t.Helper()
	for _, o := range documents(t, file, fleet[file]) {
		if o.GetKind() == sourcev1.OCIRepositoryKind && o.GetName() == name {
			if digest, _, _ := unstructured.NestedString(o.Object, "spec", "ref", "digest"); digest != "" {
				return digest
			}
		}
	}
	t.Fatalf("%s pins no digest for OCIRepository %s", file, name)
	return ""
}
