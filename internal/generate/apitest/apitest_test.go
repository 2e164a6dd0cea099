package apitest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

func renderDir(t *testing.T, dir string) *generate.Fleet {
	t.Helper()
	repo := spectest.Load(t, dir)
	f, err := generate.Render(repo, generate.Options{SpecRevision: func(*load.LoadedApp) string { return strings.Repeat("ab", 20) }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// ensureProjectNamespaces creates the project Namespaces a rendered fleet
// holds: each is its file in the cluster folder (projects/<name>.yaml), or
// namespace-<name>.yaml in a _project folder for remote clusters.
func ensureProjectNamespaces(t *testing.T, f *generate.Fleet) {
	t.Helper()
	for _, file := range f.Files {
		switch {
		case strings.Contains(file.Path, "/_project/namespace-"):
			ensureNamespace(t, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file.Path), "namespace-"), ".yaml"))
		case strings.Contains(file.Path, "/projects/") && bytes.Contains(file.Data, []byte("\nkind: Namespace\n")):
			ensureNamespace(t, strings.TrimSuffix(filepath.Base(file.Path), ".yaml"))
		}
	}
}

// TestRenderedObjectsAreValid renders the examples and every golden spec
// case and sends each object to the API server.
func TestRenderedObjectsAreValid(t *testing.T) {
	dirs := []string{"../../../examples", "../../../examples/real-apps", "../../../examples/environments"}
	cases, err := os.ReadDir("../testdata/specs")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		dirs = append(dirs, filepath.Join("../testdata/specs", c.Name()))
	}
	scheme, err := testenv.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	strict := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	ensureNamespace(t, "flux-system")
	objects := 0
	kinds := map[string]bool{}
	for _, dir := range dirs {
		f := renderDir(t, dir)
		// Namespaces first, for real: a dry run stores nothing.
		ensureProjectNamespaces(t, f)
		for _, file := range f.Files {
			if filepath.Base(file.Path) == "kustomization.yaml" || file.Path == releaseFileOf(file.Path) {
				continue // kustomize's configuration, and an environment's release record
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := env.DryRunApply(ctx, file.Data); err != nil {
				t.Errorf("%s: %s: the API server refused it: %v", dir, file.Path, err)
			}
			cancel()
			for _, doc := range bytes.Split(file.Data, []byte("\n---\n")) {
				obj, gvk, err := strict.Decode(doc, nil, nil)
				if err != nil {
					t.Errorf("%s: %s: strict decoding: %v", dir, file.Path, err)
					continue
				}
				_ = obj
				kinds[gvk.Kind] = true
				objects++
			}
		}
	}
	var got []string
	for k := range kinds {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"ConfigMap", "CronJob", "Deployment", "HelmRelease", "HelmRepository", "HorizontalPodAutoscaler", "Ingress", "Job", "Kustomization", "Namespace", "OCIRepository", "PersistentVolumeClaim", "PodDisruptionBudget", "RoleBinding", "Service", "ServiceAccount", "StatefulSet"}
	if !slices.Equal(got, want) {
		t.Errorf("kinds checked = %v, want %v", got, want)
	}
	t.Logf("%d objects from %d spec folders accepted", objects, len(dirs))
}

// TestUnknownFieldIsRefused makes sure the check above can fail: the same
// Kustomization with a field Flux does not know is refused.
func TestUnknownFieldIsRefused(t *testing.T) {
	f := renderDir(t, "../../../examples")
	ensureNamespace(t, "flux-system")
	for _, file := range f.Files {
		if strings.HasSuffix(file.Path, "clusters/prod-eu/apps/shop-orders.yaml") {
			bad := bytes.Replace(file.Data, []byte("  prune: true\n"), []byte("  prune: true\n  pruneHarder: true\n"), 1)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := env.DryRunApply(ctx, bad)
			if err == nil || !strings.Contains(err.Error(), "pruneHarder") {
				t.Fatalf("an unknown field was accepted: %v", err)
			}
			return
		}
	}
	t.Fatal("no orders Kustomizations rendered")
}

// releaseFileOf is the release file (layout.ReleaseFile) of the app whose
// folder holds p, or "".
func releaseFileOf(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) != 5 || parts[0] != layout.AppsDir {
		return ""
	}
	return layout.ReleaseFile(parts[1], parts[2], parts[3])
}
