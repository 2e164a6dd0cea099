package cluster_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
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
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/test/cluster"
)

// waitTimeout bounds each wait of the test on Flux. Reconciliations here
// take seconds; the bound only keeps a broken cluster from hanging the run.
const waitTimeout = 3 * time.Minute

// TestCluster starts the environment once and proves that real Flux works
// in it: a Kustomization with wait: true applies a Deployment from a git
// repository served over smart HTTP and becomes Ready once kwok makes the
// Deployment Available, with its events reaching a webhook through
// notification-controller; and HelmReleases of the stand-in postgresql
// chart become Ready and create the Secret and Service that fleetwright's
// exports name.
func TestCluster(t *testing.T) {
	t.Parallel()
	began := time.Now()
	c := cluster.StartT(t, cluster.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil))))
	t.Logf("cluster started in %s", time.Since(began).Round(time.Millisecond))

	t.Run("ready", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		var crds apiextensionsv1.CustomResourceDefinitionList
		if err := c.Client.List(ctx, &crds); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, crd := range crds.Items {
			if !strings.HasSuffix(crd.Spec.Group, ".toolkit.fluxcd.io") {
				t.Errorf("unexpected CRD %s", crd.Name)
			}
			names = append(names, crd.Name)
		}
		for _, want := range []string{
			"alerts.notification.toolkit.fluxcd.io",
			"gitrepositories.source.toolkit.fluxcd.io",
			"helmreleases.helm.toolkit.fluxcd.io",
			"kustomizations.kustomize.toolkit.fluxcd.io",
			"providers.notification.toolkit.fluxcd.io",
		} {
			if !slices.Contains(names, want) {
				t.Errorf("CRD %s not installed; have %v", want, names)
			}
		}
		var ns corev1.Namespace
		if err := c.Client.Get(ctx, client.ObjectKey{Name: cluster.FluxNamespace}, &ns); err != nil {
			t.Errorf("namespace %s: %v", cluster.FluxNamespace, err)
		}
		if len(c.Nodes) != 1 {
			t.Fatalf("Nodes = %v, want one", c.Nodes)
		}
		var node corev1.Node
		if err := c.Client.Get(ctx, client.ObjectKey{Name: c.Nodes[0]}, &node); err != nil {
			t.Fatal(err)
		}
		if got := node.Annotations["kwok.x-k8s.io/node"]; got != "fake" {
			t.Errorf("Node annotation kwok.x-k8s.io/node = %q, want fake", got)
		}
		if !strings.HasPrefix(c.EventsURL, "http://127.0.0.1:") {
			t.Errorf("EventsURL = %q, want an address on 127.0.0.1", c.EventsURL)
		}
	})

	t.Run("kustomization", func(t *testing.T) {
		t.Parallel()
		testKustomization(t, c)
	})

	for _, tt := range []struct {
		name     string
		release  string
		values   map[string]any
		password string // the value of the user's password key, when given
	}{
		{
			name:    "postgresql as render installs it",
			release: "my-api-postgres",
			values: exports.WithFullnameOverride(map[string]any{
				"auth": map[string]any{"database": "myapp", "username": "myapp"},
			}, "my-api-postgres"),
		},
		{
			name:    "postgresql named by the chart, given passwords",
			release: "db",
			values: map[string]any{
				"auth": map[string]any{"username": "app", "password": "given-pw", "postgresPassword": "admin-pw"},
			},
			password: "given-pw",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testPostgreSQLRelease(t, c, tt.release, tt.values, tt.password)
		})
	}
}

func testKustomization(t *testing.T, c *cluster.Cluster) {
	ctx := t.Context()
	const appNS = "web"
	git := gittest.NewServer(t)
	repoURL := git.CreateRepo(t, "fleet.git", "main", map[string]string{
		"apps/web/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\n" +
			"kind: Kustomization\nresources:\n- namespace.yaml\n- deployment.yaml\n",
		"apps/web/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + appNS + "\n",
		"apps/web/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ` + appNS + `
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
`,
	})

	// Events of the objects in flux-system, posted to this server.
	hook := newEventRecorder(t, []byte("hmac-key-for-tests"))
	if err := c.ForwardEvents(ctx, cluster.FluxNamespace, "test-webhook", hook.srv.URL, hook.key); err != nil {
		t.Fatal(err)
	}

	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: cluster.FluxNamespace},
		Spec: sourcev1.GitRepositorySpec{
			URL:       repoURL,
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval:  metav1.Duration{Duration: time.Hour},
		},
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: cluster.FluxNamespace},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      "./apps/web",
			Prune:     true,
			Wait:      true,
			Timeout:   &metav1.Duration{Duration: time.Minute},
			Interval:  metav1.Duration{Duration: time.Hour},
			// The platform's, as the root is: Flux's lockdown runs one
			// that names no account as its namespace's default one.
			ServiceAccountName: cluster.RootServiceAccount,
		},
	}
	for _, obj := range []client.Object{repo, ks} {
		if err := c.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	waitReady(t, c, ks, func() ([]metav1.Condition, int64) { return ks.Status.Conditions, ks.Status.ObservedGeneration })
	t.Logf("Kustomization Ready in %s", time.Since(began).Round(time.Millisecond))
	if !strings.HasPrefix(ks.Status.LastAppliedRevision, "main@sha1:") {
		t.Errorf("lastAppliedRevision = %q, want main@sha1:…; status %+v", ks.Status.LastAppliedRevision, ks.Status)
	}

	var dep appsv1.Deployment
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Status.AvailableReplicas != 2 {
		t.Errorf("Deployment web: %d available replicas, want 2", dep.Status.AvailableReplicas)
	}
	if dep.Labels["kustomize.toolkit.fluxcd.io/name"] != "web" {
		t.Errorf("Deployment web labels = %v, want Flux's kustomize.toolkit.fluxcd.io/name=web", dep.Labels)
	}
	var pods corev1.PodList
	if err := c.Client.List(ctx, &pods, client.InNamespace(appNS), client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == c.Nodes[0] {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d pods Running on %s, want 2", running, c.Nodes[0])
	}

	// The success event of the Kustomization, through notification-controller.
	ev := hook.wait(t, func(e event) bool {
		return e.InvolvedObject.Kind == kustomizev1.KustomizationKind && e.InvolvedObject.Name == "web" &&
			e.Reason == meta.ReconciliationSucceededReason
	})
	if ev.ReportingController != "kustomize-controller" || !strings.HasPrefix(ev.Metadata["revision"], "main@sha1:") {
		t.Errorf("event = %+v, want one from kustomize-controller with the revision", ev)
	}
}

func testPostgreSQLRelease(t *testing.T, c *cluster.Cluster, release string, values map[string]any, password string) {
	ctx := t.Context()
	repoURL, stop, err := cluster.StartChartRepo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pg-"}}
	if err := c.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	// The release runs as the namespace's own account, bound to admin
	// there, as render writes it for a project: with Flux's lockdown one
	// that names no account runs as the namespace's default one.
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: layout.ProjectServiceAccount, Namespace: ns.Name}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: layout.ProjectRoleBinding, Namespace: ns.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: layout.ProjectRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: layout.ProjectServiceAccount, Namespace: ns.Name}},
		},
	} {
		if err := c.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ns.Name},
		Spec: helmv2.HelmReleaseSpec{
			ServiceAccountName: layout.ProjectServiceAccount,
			Interval:           metav1.Duration{Duration: time.Hour},
			Timeout:            &metav1.Duration{Duration: 2 * time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart:     cluster.PostgreSQLChartName,
				Version:   cluster.PostgreSQLChartVersion,
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"},
				Interval:  &metav1.Duration{Duration: time.Hour},
			}},
			Values: &apiextensionsv1.JSON{Raw: raw},
		},
	}
	hrepo := &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "charts", Namespace: ns.Name},
		Spec:       sourcev1.HelmRepositorySpec{URL: repoURL, Interval: metav1.Duration{Duration: time.Hour}},
	}
	for _, obj := range []client.Object{hrepo, hr} {
		if err := c.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	waitReady(t, c, hr, func() ([]metav1.Condition, int64) { return hr.Status.Conditions, hr.Status.ObservedGeneration })
	t.Logf("HelmRelease %s Ready in %s", release, time.Since(began).Round(time.Millisecond))

	// What fleetwright's exports say the chart creates, checked against
	// what it did create.
	exp, err := exports.ForAddon(exports.AddonInput{
		Type: "postgresql", Release: release, Namespace: ns.Name, Values: values,
	})
	if err != nil {
		t.Fatal(err)
	}
	svcName, _, _ := strings.Cut(exp[exports.KeyHost].Value, ".")
	var svc corev1.Service
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: svcName}, &svc); err != nil {
		t.Fatalf("Service of the host export %q: %v", exp[exports.KeyHost].Value, err)
	}
	if len(svc.Spec.Ports) != 1 || fmt.Sprint(svc.Spec.Ports[0].Port) != exp[exports.KeyPort].Value {
		t.Errorf("Service %s ports = %+v, want the port export %s", svcName, svc.Spec.Ports, exp[exports.KeyPort].Value)
	}
	ref := exp[exports.KeyPassword].Secret
	if ref == nil {
		t.Fatalf("password export = %+v, want a Secret reference", exp[exports.KeyPassword])
	}
	var secret corev1.Secret
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: ref.Name}, &secret); err != nil {
		t.Fatalf("Secret of the password export: %v", err)
	}
	got := secret.Data[ref.Key]
	switch {
	case password != "" && string(got) != password:
		t.Errorf("Secret %s key %s does not hold the given password", ref.Name, ref.Key)
	case password == "" && !isAlphaNum(got, 10):
		t.Errorf("Secret %s key %s holds %d bytes, want 10 random letters and digits", ref.Name, ref.Key, len(got))
	}
	if _, ok := secret.Data["postgres-password"]; !ok {
		t.Errorf("Secret %s has keys %v, want postgres-password too", ref.Name, slices.Sorted(maps.Keys(secret.Data)))
	}

	var sts appsv1.StatefulSet
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: svcName}, &sts); err != nil {
		t.Fatal(err)
	}
	if img := sts.Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(img, "docker.io/bitnami/postgresql:") {
		t.Errorf("StatefulSet image = %q, want docker.io/bitnami/postgresql", img)
	}
	if sts.Status.ReadyReplicas != 1 {
		t.Errorf("StatefulSet %s: %d ready replicas, want 1", sts.Name, sts.Status.ReadyReplicas)
	}

	if password != "" {
		return
	}
	// An upgrade keeps the generated password, as the real chart does.
	upgraded := maps.Clone(values)
	upgraded["primary"] = map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}}
	before := hr.DeepCopy()
	if hr.Spec.Values.Raw, err = json.Marshal(upgraded); err != nil {
		t.Fatal(err)
	}
	// A merge patch: helm-controller may have changed the object's metadata
	// since it was read, which an update would trip over.
	if err := c.Client.Patch(ctx, hr, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, hr, func() ([]metav1.Condition, int64) { return hr.Status.Conditions, hr.Status.ObservedGeneration })
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(&sts), &sts); err != nil {
		t.Fatal(err)
	}
	if cpu := sts.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String(); cpu != "100m" {
		t.Errorf("after the upgrade the StatefulSet requests cpu %s, want 100m", cpu)
	}
	var after corev1.Secret
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(&secret), &after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after.Data[ref.Key], got) {
		t.Errorf("the upgrade changed Secret %s key %s", ref.Name, ref.Key)
	}
}

// waitReady polls obj until its status has observed its current generation
// and its Ready condition is True (kstatus's rule), failing on timeout.
func waitReady(t *testing.T, c *cluster.Cluster, obj client.Object, status func() ([]metav1.Condition, int64)) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(waitTimeout)
	for {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		conds, observed := status()
		if ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition); observed == obj.GetGeneration() &&
			ready != nil && ready.Status == metav1.ConditionTrue {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%T %s not Ready after %s: observed generation %d of %d, conditions %+v",
				obj, obj.GetName(), waitTimeout, observed, obj.GetGeneration(), conds)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func isAlphaNum(b []byte, n int) bool {
	if len(b) != n {
		return false
	}
	for _, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// event is the part of a Flux event the test reads.
type event struct {
	InvolvedObject      corev1.ObjectReference `json:"involvedObject"`
	Reason              string                 `json:"reason"`
	Message             string                 `json:"message"`
	Metadata            map[string]string      `json:"metadata"`
	ReportingController string                 `json:"reportingController"`
}

// eventRecorder is a webhook that checks each event's HMAC signature and
// keeps the events.
type eventRecorder struct {
	srv *httptest.Server
	key []byte

	mu     sync.Mutex
	events []event
	bad    []string
}

func newEventRecorder(t *testing.T, key []byte) *eventRecorder {
	r := &eventRecorder{key: key}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			r.bad = append(r.bad, err.Error())
			return
		}
		mac := hmac.New(sha256.New, r.key)
		mac.Write(body)
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); req.Header.Get("X-Signature") != want {
			r.bad = append(r.bad, "bad signature "+req.Header.Get("X-Signature"))
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var e event
		if err := json.Unmarshal(body, &e); err != nil {
			r.bad = append(r.bad, err.Error())
			return
		}
		r.events = append(r.events, e)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wait returns the first event that match accepts, failing after
// waitTimeout or on any badly signed request.
func (r *eventRecorder) wait(t *testing.T, match func(event) bool) event {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		r.mu.Lock()
		events, bad := append([]event(nil), r.events...), append([]string(nil), r.bad...)
		r.mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("webhook got bad requests: %v", bad)
		}
		for _, e := range events {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no matching event after %s; got %+v", waitTimeout, events)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
