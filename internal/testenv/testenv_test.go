package testenv

import (
	"os"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
)

var env *Env

func TestMain(m *testing.M) { os.Exit(Main(m, &env)) }

func TestKubeconfigReachesServer(t *testing.T) {
	t.Parallel()
	cfg, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigFile(t))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != KubeVersion {
		t.Errorf("server version = %q, want %q", v.GitVersion, KubeVersion)
	}
}

func TestFluxCRDsEstablished(t *testing.T) {
	t.Parallel()
	want, err := FluxCRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		t.Run(w.Name, func(t *testing.T) {
			t.Parallel()
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(t.Context(), types.NamespacedName{Name: w.Name}, got); err != nil {
				t.Fatal(err)
			}
			if c := crdCondition(got, apiextensionsv1.Established); c == nil || c.Status != apiextensionsv1.ConditionTrue {
				t.Errorf("not established: %v", got.Status.Conditions)
			}
			if c := crdCondition(got, apiextensionsv1.NonStructuralSchema); c != nil && c.Status == apiextensionsv1.ConditionTrue {
				t.Errorf("schema is not structural: %v", got.Status.Conditions)
			}
			for _, v := range w.Spec.Versions {
				gk := schema.GroupKind{Group: w.Spec.Group, Kind: w.Spec.Names.Kind}
				if _, err := env.Client.RESTMapper().RESTMapping(gk, v.Name); err != nil {
					t.Errorf("%s %s not served: %v", gk, v.Name, err)
				}
			}
		})
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-api
  namespace: NS
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: api
        image: registry.example/web:1.0.0
`

const fluxObjects = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: fleet
  namespace: NS
spec:
  interval: 1m
  url: http://127.0.0.1:1/fleet.git
  ref: {branch: main}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: shop-web-api
  namespace: NS
  annotations:
    event.toolkit.fluxcd.io/app: web
spec:
  interval: 10m
  path: ./apps/prod/shop/web/api
  prune: true
  wait: true
  timeout: 5m
  sourceRef: {kind: GitRepository, name: fleet}
  dependsOn:
  - name: shop-web-db
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: web-db
  namespace: NS
spec:
  interval: 1h
  url: https://charts.example/
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web-db
  namespace: NS
spec:
  interval: 10m
  chart:
    spec:
      chart: postgresql
      version: 16.x
      sourceRef: {kind: HelmRepository, name: web-db}
  values:
    fullnameOverride: web-db
`

func TestDryRunApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		wantErr []string // substrings; none means success
	}{
		{name: "deployment", in: deployment},
		{name: "flux objects", in: fluxObjects},
		{name: "comments and empty documents", in: "# header\n---\n" + deployment + "---\n---\n"},
		{
			name: "unknown field in kustomization",
			in: `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: NS}
spec:
  interval: 10m
  prune: true
  sourceRef: {kind: GitRepository, name: fleet}
  pruneEverything: true
`,
			wantErr: []string{"document 0: Kustomization NS/app:", "pruneEverything"},
		},
		{
			name:    "unknown field in deployment",
			in:      strings.Replace(deployment, "  replicas: 2\n", "  replicas: 2\n  replica: 3\n", 1),
			wantErr: []string{"Deployment NS/web-api", ".spec.replica"},
		},
		{
			name:    "wrong type in kustomization",
			in:      strings.Replace(fluxObjects, "  prune: true\n", "  prune: yes-please\n", 1),
			wantErr: []string{"document 1: Kustomization NS/shop-web-api", "prune"},
		},
		{
			name: "missing required field in kustomization",
			in: `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: NS}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: fleet}
`,
			wantErr: []string{"spec.prune: Required value"},
		},
		{
			name: "helmrelease without chart",
			in: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: db, namespace: NS}
spec:
  interval: 10m
`,
			wantErr: []string{"HelmRelease NS/db", "chart"},
		},
		{
			name:    "duplicate field",
			in:      strings.Replace(deployment, "  replicas: 2\n", "  replicas: 2\n  replicas: 3\n", 1),
			wantErr: []string{"replicas"},
		},
		{
			name:    "unknown kind",
			in:      "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: NS}\n",
			wantErr: []string{"document 0: Widget w:"},
		},
		{
			name:    "no name",
			in:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: NS}\n",
			wantErr: []string{"document 0: ConfigMap: metadata.name is required"},
		},
		{
			name:    "only the bad document fails",
			in:      deployment + "---\n" + strings.Replace(deployment, "replicas: 2", "replicas: two", 1),
			wantErr: []string{"document 1: Deployment NS/web-api"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := env.Namespace(t)
			err := env.DryRunApply(t.Context(), []byte(strings.ReplaceAll(tt.in, "NS", ns)))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("DryRunApply() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("DryRunApply() = nil, want an error")
			}
			msg := strings.ReplaceAll(err.Error(), ns, "NS")
			t.Logf("DryRunApply() error:\n%s", msg)
			for _, want := range tt.wantErr {
				if !strings.Contains(msg, want) {
					t.Errorf("DryRunApply() error does not contain %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "document 0: Deployment") && tt.name == "only the bad document fails" {
				t.Errorf("the valid document was reported too:\n%s", msg)
			}
		})
	}
}

func TestDryRunApplyStoresNothing(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	if err := env.DryRunApply(t.Context(), []byte(strings.ReplaceAll(fluxObjects+"---\n"+deployment, "NS", ns))); err != nil {
		t.Fatal(err)
	}
	k := &kustomizev1.Kustomization{}
	if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "shop-web-api"}, k); !apierrors.IsNotFound(err) {
		t.Errorf("Get Kustomization after dry run: %v, want NotFound", err)
	}
	d := &appsv1.Deployment{}
	if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "web-api"}, d); !apierrors.IsNotFound(err) {
		t.Errorf("Get Deployment after dry run: %v, want NotFound", err)
	}
}

func TestClientRoundTrip(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	ctx := t.Context()
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL:       "http://127.0.0.1:1/fleet.git",
			Interval:  metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
		},
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-web-api", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: 10 * time.Minute},
			Path:      "./apps/prod/shop/web/api",
			Prune:     true,
			Wait:      true,
			Timeout:   &metav1.Duration{Duration: 5 * time.Minute},
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			DependsOn: []kustomizev1.DependencyReference{{Name: "shop-web-db"}},
		},
	}
	if err := env.Client.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	got := &kustomizev1.Kustomization{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop-web-api"}, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ks.Spec, got.Spec); diff != "" {
		t.Errorf("Kustomization spec after round trip (-want +got):\n%s", diff)
	}

	// No controller runs: a test writes status itself.
	got.Status.Conditions = []metav1.Condition{{
		Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason,
		Message: "Applied revision: main@sha1:0123", LastTransitionTime: metav1.Now(), ObservedGeneration: got.Generation,
	}}
	if err := env.Client.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	again := &kustomizev1.Kustomization{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop-web-api"}, again); err != nil {
		t.Fatal(err)
	}
	if len(again.Status.Conditions) != 1 || again.Status.Conditions[0].Reason != meta.SucceededReason {
		t.Errorf("status conditions = %+v, want one Ready=True", again.Status.Conditions)
	}
}

func TestNamespace(t *testing.T) {
	t.Parallel()
	a, b := env.Namespace(t), env.Namespace(t)
	if a == b {
		t.Fatalf("Namespace() returned %q twice", a)
	}
	for _, ns := range []string{a, b} {
		if !strings.HasPrefix(ns, "testnamespace-") {
			t.Errorf("namespace %q does not start with the test's name", ns)
		}
		if err := env.Client.Get(t.Context(), types.NamespacedName{Name: ns}, &corev1.Namespace{}); err != nil {
			t.Errorf("namespace %q: %v", ns, err)
		}
	}
}
