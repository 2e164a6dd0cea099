package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/testenv"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// The test API server starts on first use, so that the tests that need no
// cluster run without one, and stops when the tests end.
var cluster struct {
	once sync.Once
	env  *testenv.Env
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster.env != nil {
		if err := cluster.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

func testCluster(t *testing.T) *testenv.Env {
	t.Helper()
	cluster.once.Do(func() { cluster.env, cluster.err = testenv.Start(context.Background()) })
	if cluster.err != nil {
		t.Fatal(cluster.err)
	}
	return cluster.env
}

// applyFleet applies every object of the fleet files to the cluster for
// real, as kustomize-controller does: server-side apply, forced, as its
// field manager. Only files under the given prefixes are applied.
// applyFleet applies the objects of the files under the prefixes and
// returns how many it applied.
func applyFleet(t *testing.T, env *testenv.Env, files map[string][]byte, prefixes ...string) int {
	t.Helper()
	applied := 0
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if !yield(p) {
				return
			}
		}
	}) {
		if !slices.ContainsFunc(prefixes, func(pre string) bool { return len(p) >= len(pre) && p[:len(pre)] == pre }) || path.Base(p) == "kustomization.yaml" {
			continue
		}
		docs, err := yamlx.Parse(files[p])
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d.Root == nil {
				continue
			}
			applyObject(t, env, objectOf(t, d.Root))
			applied++
		}
	}
	return applied
}

// objectOf decodes a fleet document into an object.
func objectOf(t *testing.T, n *node) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(yamlx.AppendJSON(nil, n), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// applyObject server-side applies an object, forced, as kustomize-controller.
func applyObject(t *testing.T, env *testenv.Env, obj map[string]any) {
	t.Helper()
	u := unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	mapping, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	// Namespace("") addresses a cluster-scoped object.
	_, err = env.Dynamic.Resource(mapping.Resource).Namespace(u.GetNamespace()).Patch(t.Context(), u.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: DefaultFieldManager, Force: new(true)})
	if err != nil {
		t.Fatalf("applying %s %s: %v", gvk.Kind, u.GetName(), err)
	}
}

func ensureNamespace(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// The examples dry-run cleanly against a real API server with Flux's CRDs.
func TestLiveDryRunExamples(t *testing.T) {
	t.Parallel()
	_, files := exampleFleet(t)
	liveDryRunClean(t, files, nil)
}

// So do they in the layout of component artifacts: the OCIRepositories,
// and the objects of the folders their Kustomizations build.
func TestLiveDryRunArtifacts(t *testing.T) {
	t.Parallel()
	repo, files := artifactsFleet(t)
	liveDryRunClean(t, files, &repo.Platform)
}

func liveDryRunClean(t *testing.T, files map[string][]byte, plat *spec.Platform) {
	env := testCluster(t)
	ensureNamespace(t, env, "flux-system")
	// The project files are applied (the namespaces, and with a source
	// per project the projects' sources), as Flux applies them first.
	applied := applyFleet(t, env, files, "clusters/prod-eu/projects/")
	rep := verifyFleet(t, files, Options{Platform: plat, Live: &Live{Config: env.Config}})
	var got []string
	notYet := 0
	for _, f := range rep.Findings {
		switch {
		case f.Check != CheckDryRun && f.Check != CheckLiveDrift:
		case f.Severity == SeverityInfo && f.Message == "not in the cluster yet; Flux creates it":
			notYet++
		default:
			got = append(got, f.String())
		}
	}
	if len(got) > 0 {
		t.Errorf("live findings on the examples:\n%s", got)
	}
	// Every object but those is new to the cluster.
	if want := rep.Stats.Objects - applied; notYet != want || rep.Stats.LiveObjects != rep.Stats.Objects {
		t.Errorf("%d objects not in the cluster yet, want %d (%d of %d checked)", notYet, want, rep.Stats.LiveObjects, rep.Stats.Objects)
	}
}

// liveFleet renders a one-app fleet whose project is the test's namespace.
func liveFleet(t *testing.T, ns string) (*load.Repo, map[string][]byte) {
	t.Helper()
	return webFleet(t, "clusters: [{name: live, production: true}]\nbuild: {pin: false}\n", ns)
}

// webFleet renders the app web (one api) in project ns on the platform.
func webFleet(t *testing.T, platform, ns string) (*load.Repo, map[string][]byte) {
	t.Helper()
	return renderSpecs(t, map[string][]byte{
		"platform.yaml": []byte(platform),
		"apps/" + ns + "/web/app.yaml": []byte(`name: web
components:
  - name: api
    type: workload
    workload_spec:
      image: registry.test/web/api:1.0.0@sha256:` + fmt.Sprintf("%064x", 1) + `
      replicas: 2
      port: 8080
      health_check: {path: /healthz}
      resources: {requests: {cpu: 10m, memory: 16Mi}}
`),
	})
}

// renderSpecs loads an apps repository's files and renders them as render
// does offline.
func renderSpecs(t *testing.T, files map[string][]byte) (*load.Repo, map[string][]byte) {
	t.Helper()
	repo := spectest.LoadFiles(t, files)
	f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	return repo, f.Map()
}

func verifyLive(t *testing.T, env *testenv.Env, repo *load.Repo, files map[string][]byte) []string {
	t.Helper()
	rep := verifyFleet(t, files, Options{Platform: &repo.Platform, Live: &Live{Config: env.Config}})
	return lines(rep, CheckDryRun, CheckLiveDrift)
}

// An object that another field manager changed in the cluster shows as
// drift, field by field: blocked where that manager now owns a field with
// another value, safe to reconcile where nobody does.
func TestLiveDrift(t *testing.T) {
	t.Parallel()
	env := testCluster(t)
	ensureNamespace(t, env, "flux-system")
	ns := env.Namespace(t)
	repo, files := liveFleet(t, ns)
	applyFleet(t, env, files, "apps/", "clusters/")
	if got := verifyLive(t, env, repo, files); len(got) != 0 {
		t.Fatalf("findings right after applying the fleet:\n%s", got)
	}

	// kubectl scale / edit: an update by another manager takes spec.replicas.
	deploy := env.Dynamic.Resource(appsV1Deployments).Namespace(ns)
	if _, err := deploy.Patch(t.Context(), "web-api", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	// kubectl label app-: the label is gone, and nobody owns it any more.
	if _, err := deploy.Patch(t.Context(), "web-api", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/labels/fleetwright.io~1app"}]`),
		metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
		t.Fatal(err)
	}
	file := "fleet/apps/live/" + ns + "/web/api/deployment-web-api.yaml"
	want := []string{
		file + ":10: warning: Deployment/web-api: metadata.labels.fleetwright.io/app: desired \"web\", observed <absent>: safe to reconcile (Flux's apply restores it)",
		file + ":16: Deployment/web-api: spec.replicas: desired 2, observed 5: blocked: field manager \"kubectl-edit\" owns it with another value, so an apply as kustomize-controller conflicts",
	}
	if diff := cmp.Diff(want, verifyLive(t, env, repo, files)); diff != "" {
		t.Errorf("live drift (-want +got):\n%s", diff)
	}
}

// namespacedFleet is the one-app fleet of a new namespace, in a cluster
// that has the namespace (and flux-system) but none of its objects.
func namespacedFleet(t *testing.T) (*testenv.Env, string, *load.Repo, map[string][]byte) {
	t.Helper()
	env := testCluster(t)
	ensureNamespace(t, env, "flux-system")
	ns := env.Namespace(t)
	repo, files := liveFleet(t, ns)
	applyFleet(t, env, files, "clusters/live/projects/")
	return env, ns, repo, files
}

// The cluster's rejection of an object is reported with its message.
func TestLiveDryRunRejects(t *testing.T) {
	t.Parallel()
	env, ns, repo, files := namespacedFleet(t)
	svc := "apps/live/" + ns + "/web/api/service-web-api.yaml"
	edit(t, files, svc, "  - name: http\n    port: 8080\n", "  - name: http\n    port: 70000\n")
	want := []string{
		"fleet/" + svc + ":18: Service/web-api: spec.ports[0].port: the cluster rejects it: Service \"web-api\" is invalid: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
	}
	var got []string
	for _, l := range verifyLive(t, env, repo, files) {
		if !strings.Contains(l, ": info: ") {
			got = append(got, l)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dry-run findings (-want +got):\n%s", diff)
	}
}

// The API server's warnings on an object's dry-run are findings at the
// field they name; its warning on Flux's finalizer, which every Flux object
// of the fleet carries, is not.
func TestLiveDryRunWarns(t *testing.T) {
	t.Parallel()
	env, ns, repo, files := namespacedFleet(t)
	deploy := "apps/live/" + ns + "/web/api/deployment-web-api.yaml"
	edit(t, files, deploy, "  template:\n    metadata:\n", "  template:\n    metadata:\n      annotations:\n        scheduler.alpha.kubernetes.io/critical-pod: \"\"\n")
	want := []string{
		"fleet/" + deploy + ":25: warning: Deployment/web-api: spec.template.metadata.annotations.scheduler.alpha.kubernetes.io/critical-pod: the cluster warns: " +
			`spec.template.metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead`,
	}
	var got []string
	for _, l := range verifyLive(t, env, repo, files) {
		if strings.Contains(l, "the cluster warns") || strings.Contains(l, "finalizers") {
			got = append(got, l)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dry-run warnings (-want +got):\n%s", diff)
	}
}

var appsV1Deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
