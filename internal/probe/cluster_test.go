package probe

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

const rev = "main@sha1:2dc6a1f0c3e94b7d8a5f6e1b2c3d4e5f60718293"

func appLabels(project, app, component string) map[string]string {
	return map[string]string{layout.LabelApp: app, layout.LabelProject: project, layout.LabelComponent: component}
}

// kustomization creates a Flux Kustomization of the app as render writes it.
func kustomization(t *testing.T, c client.Client, fluxNS, project, app, component string, timeout time.Duration) *kustomizev1.Kustomization {
	t.Helper()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{
			Name: project + "-" + app + "-" + component, Namespace: fluxNS,
			Annotations: map[string]string{layout.EventAnnotationPrefix + layout.EventApp: app, layout.EventAnnotationPrefix + layout.EventProject: project, layout.EventAnnotationPrefix + layout.EventComponent: component},
		},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: 10 * time.Minute},
			Timeout:   &metav1.Duration{Duration: timeout},
			Path:      "./apps/prod/" + project + "/" + app + "/" + component,
			Prune:     true,
			Wait:      true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"},
		},
	}
	if err := c.Create(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	return k
}

// setKustomizationStatus writes a Kustomization's status as kustomize-controller would.
func setKustomizationStatus(t *testing.T, c client.Client, k *kustomizev1.Kustomization, applied, attempted string, conds ...metav1.Condition) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	for i := range conds {
		conds[i].LastTransitionTime = metav1.Now()
		conds[i].ObservedGeneration = k.Generation
	}
	k.Status.ObservedGeneration = k.Generation
	k.Status.LastAppliedRevision = applied
	k.Status.LastAttemptedRevision = attempted
	k.Status.Conditions = conds
	if err := c.Status().Update(t.Context(), k); err != nil {
		t.Fatal(err)
	}
}

func TestSyncAgainstAPIServer(t *testing.T) {
	t.Parallel()
	c := env.Client
	ready := func(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: meta.ReadyCondition, Status: status, Reason: reason, Message: msg}
	}
	tests := []struct {
		name    string
		status  func(t *testing.T, k *kustomizev1.Kustomization)
		state   State
		msgPart string
	}{
		{"not observed", func(*testing.T, *kustomizev1.Kustomization) {}, StateProgressing, "waiting for kustomize-controller to observe the latest spec"},
		{"ready at the revision", func(t *testing.T, k *kustomizev1.Kustomization) {
			setKustomizationStatus(t, c, k, rev, rev, ready(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied revision: "+rev))
		}, StatePassed, "1 Kustomizations ready"},
		{"ready at an older revision", func(t *testing.T, k *kustomizev1.Kustomization) {
			setKustomizationStatus(t, c, k, "main@sha1:old", "main@sha1:old", ready(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied"))
		}, StateProgressing, "applied main@sha1:old, waiting for " + rev},
		{"build failed", func(t *testing.T, k *kustomizev1.Kustomization) {
			setKustomizationStatus(t, c, k, "main@sha1:old", rev, ready(metav1.ConditionFalse, meta.BuildFailedReason, "kustomize build failed"))
		}, StateFailed, "BuildFailed: kustomize build failed"},
		{"health check failed", func(t *testing.T, k *kustomizev1.Kustomization) {
			setKustomizationStatus(t, c, k, "", rev, ready(metav1.ConditionFalse, meta.HealthCheckFailedReason, "health check failed after 30s"))
		}, StateFailed, "HealthCheckFailed"},
		{"dependency not ready", func(t *testing.T, k *kustomizev1.Kustomization) {
			setKustomizationStatus(t, c, k, "", "", ready(metav1.ConditionFalse, meta.DependencyNotReadyReason, "dependency 'shop-api-db' is not ready"))
		}, StateProgressing, "DependencyNotReady"},
		{"stalled", func(t *testing.T, k *kustomizev1.Kustomization) {
			setKustomizationStatus(t, c, k, "", rev, ready(metav1.ConditionFalse, "InvalidPath", "path not found"),
				metav1.Condition{Type: meta.StalledCondition, Status: metav1.ConditionTrue, Reason: "InvalidPath", Message: "path not found"})
		}, StateFailed, "stalled: path not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fluxNS := env.Namespace(t)
			k := kustomization(t, c, fluxNS, "shop", "api", "web", 90*time.Second)
			// Another app's Kustomization is not looked at.
			kustomization(t, c, fluxNS, "shop", "cart", "web", time.Minute)
			tc.status(t, k)
			p := &Prober{Client: c}
			chk, timeout := p.Sync(t.Context(), Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: fluxNS})
			if chk.State != tc.state || !strings.Contains(chk.Message, tc.msgPart) {
				t.Errorf("sync = %s %q, want %s containing %q", chk.State, chk.Message, tc.state, tc.msgPart)
			}
			if timeout != 90*time.Second {
				t.Errorf("timeout = %v, want 90s", timeout)
			}
			if len(chk.Components) != 1 || chk.Components[0].Component != "web" || chk.Components[0].Name != "shop-api-web" {
				t.Errorf("components = %+v", chk.Components)
			}
		})
	}
	t.Run("no Kustomization", func(t *testing.T) {
		t.Parallel()
		p := &Prober{Client: c}
		fluxNS := env.Namespace(t)
		chk, _ := p.Sync(t.Context(), Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: fluxNS})
		if want := "no Flux Kustomization of shop/api in shop or " + fluxNS; chk.State != StateGone || chk.Message != want {
			t.Errorf("sync = %s %q, want gone %q", chk.State, chk.Message, want)
		}
	})
}

// appliedBy creates a Kustomization of shop/api's component web that the
// Kustomization root applied (kustomize-controller's owner labels), with
// the given annotations, reading source.
func appliedBy(t *testing.T, c client.Client, fluxNS, root, source string, annotations map[string]string) *kustomizev1.Kustomization {
	t.Helper()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{
			Name: "shop-api-web", Namespace: fluxNS, Annotations: annotations,
			Labels: map[string]string{layout.LabelApp: "api", layout.LabelProject: "shop", layout.LabelComponent: "web",
				layout.AppliedByNameLabel: root, layout.AppliedByNamespaceLabel: fluxNS},
		},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Timeout: &metav1.Duration{Duration: time.Minute},
			Path: "./apps/prod/shop/api/web", Prune: true, Wait: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: source},
		},
	}
	if err := c.Create(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	return k
}

// rootKustomization creates the Kustomization that applies the apps' ones.
func rootKustomization(t *testing.T, c client.Client, fluxNS, source string) *kustomizev1.Kustomization {
	t.Helper()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: fluxNS},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./clusters/prod", Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: source, Namespace: fluxNS},
		},
	}
	if err := c.Create(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSyncAppliedBy checks that an app's Kustomization is green only once the
// Kustomization that applies it has applied the revision too, and that its
// spec-revision annotation is taken only when known to be the revision's.
func TestSyncAppliedBy(t *testing.T) {
	t.Parallel()
	c := env.Client
	const (
		spec    = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
		oldRev  = "main@sha1:1111111111111111111111111111111111111111"
		appRoot = "fleet"
	)
	ready := func(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: meta.ReadyCondition, Status: status, Reason: reason, Message: msg}
	}
	applied := ready(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied revision: "+rev)
	eventAnno := map[string]string{layout.EventAnnotationPrefix + layout.EventSpecRevision: spec}
	tests := []struct {
		name        string
		annotations map[string]string
		source      string // of the app's Kustomization; the root reads "fleet"
		root        func(t *testing.T, k *kustomizev1.Kustomization)
		noRoot      bool
		app         func(t *testing.T, k *kustomizev1.Kustomization)
		state       State
		msgPart     string
		spec        string
	}{
		{
			name: "both applied the revision", annotations: eventAnno, source: "fleet",
			root:  func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			app:   func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			state: StatePassed, msgPart: "1 Kustomizations ready", spec: spec,
		},
		{
			name: "the root has not applied the revision yet", annotations: eventAnno, source: "fleet",
			root: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, oldRev, rev, ready(metav1.ConditionUnknown, meta.ProgressingReason, "Building manifests"))
			},
			app:   func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			state: StateProgressing, msgPart: "waiting for Kustomization %s/fleet, which applies it, to apply " + rev + " (it applied " + oldRev + ")",
		},
		{
			name: "the root applied it and only its health check failed", annotations: eventAnno, source: "fleet",
			root: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, oldRev, rev, ready(metav1.ConditionFalse, meta.HealthCheckFailedReason, "health check failed after 1m0s"))
			},
			app:   func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			state: StatePassed, spec: spec,
		},
		{
			name: "the app's health check failed after the root applied", annotations: eventAnno, source: "fleet",
			root: func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, oldRev, rev, ready(metav1.ConditionFalse, meta.HealthCheckFailedReason, "health check failed after 20s"))
			},
			state: StateFailed, msgPart: "HealthCheckFailed: health check failed after 20s", spec: spec,
		},
		{
			name: "the app is still rolling out", annotations: eventAnno, source: "fleet",
			root: func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, oldRev, rev, ready(metav1.ConditionUnknown, meta.ProgressingReason, "Running health checks"))
			},
			state: StateProgressing, msgPart: "Progressing: Running health checks", spec: spec,
		},
		{
			name: "the root reads another source", annotations: eventAnno, source: "apps",
			root: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, oldRev, oldRev, applied)
			},
			app:   func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			state: StatePassed, spec: spec,
		},
		{
			name: "no root in the cluster", annotations: map[string]string{layout.AnnotationSpecRevision: spec}, source: "fleet", noRoot: true,
			app:   func(t *testing.T, k *kustomizev1.Kustomization) { setKustomizationStatus(t, c, k, rev, rev, applied) },
			state: StatePassed, spec: spec,
		},
		{
			name: "no root in the cluster, still rolling out", annotations: eventAnno, source: "fleet", noRoot: true,
			app: func(t *testing.T, k *kustomizev1.Kustomization) {
				setKustomizationStatus(t, c, k, oldRev, rev, ready(metav1.ConditionUnknown, meta.ProgressingReason, "Running health checks"))
			},
			state: StateProgressing, msgPart: "Running health checks",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fluxNS := env.Namespace(t)
			if !tc.noRoot {
				tc.root(t, rootKustomization(t, c, fluxNS, "fleet"))
			}
			tc.app(t, appliedBy(t, c, fluxNS, appRoot, tc.source, tc.annotations))
			p := &Prober{Client: c}
			chk, _ := p.Sync(t.Context(), Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: fluxNS})
			msgPart := strings.ReplaceAll(tc.msgPart, "%s", fluxNS)
			if chk.State != tc.state || !strings.Contains(chk.Message, msgPart) {
				t.Errorf("sync = %s %q, want %s containing %q", chk.State, chk.Message, tc.state, msgPart)
			}
			if got := chk.SpecRevision(); got != tc.spec {
				t.Errorf("spec revision = %q, want %q (components %+v)", got, tc.spec, chk.Components)
			}
		})
	}
}

// TestSyncGone checks that an app whose Kustomizations are all being deleted
// is gone, and that one being deleted beside a live one holds the check back.
func TestSyncGone(t *testing.T) {
	t.Parallel()
	c := env.Client
	ready := metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.ReconciliationSucceededReason, Message: "Applied revision: " + rev}
	// deleting marks k deleted while a finalizer (no controller removes it
	// here) keeps it in the cluster, as kustomize-controller's does while it
	// prunes.
	deleting := func(t *testing.T, k *kustomizev1.Kustomization) {
		t.Helper()
		k.Finalizers = []string{"finalizers.fluxcd.io"}
		if err := c.Update(t.Context(), k); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, fluxNS string)
		state   State
		msgPart string
	}{
		{"every one being deleted", func(t *testing.T, fluxNS string) {
			deleting(t, kustomization(t, c, fluxNS, "shop", "api", "web", time.Minute))
			deleting(t, kustomization(t, c, fluxNS, "shop", "api", "db", time.Minute))
		}, StateGone, "every Flux Kustomization of shop/api is being deleted: shop-api-db, shop-api-web"},
		{"one being deleted", func(t *testing.T, fluxNS string) {
			deleting(t, kustomization(t, c, fluxNS, "shop", "api", "worker", time.Minute))
			setKustomizationStatus(t, c, kustomization(t, c, fluxNS, "shop", "api", "web", time.Minute), rev, rev, ready)
		}, StateProgressing, "shop-api-worker: being deleted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fluxNS := env.Namespace(t)
			tc.setup(t, fluxNS)
			p := &Prober{Client: c}
			chk, _ := p.Sync(t.Context(), Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: fluxNS})
			if chk.State != tc.state || !strings.Contains(chk.Message, tc.msgPart) {
				t.Errorf("sync = %s %q, want %s containing %q", chk.State, chk.Message, tc.state, tc.msgPart)
			}
		})
	}
}

// deployment creates a Deployment of the app with the given replicas.
func deployment(t *testing.T, c client.Client, ns, project, app, component string, replicas int32) *appsv1.Deployment {
	t.Helper()
	name := app + "-" + component
	sel := map[string]string{"app.kubernetes.io/instance": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: appLabels(project, app, component)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: component, Image: "registry.example.test/" + name + ":v1"}}},
			},
		},
	}
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// setDeploymentStatus writes a Deployment's status as its controller would.
func setDeploymentStatus(t *testing.T, c client.Client, d *appsv1.Deployment, replicas, updated, available int32, conds ...appsv1.DeploymentCondition) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: updated,
		ReadyReplicas: available, AvailableReplicas: available, UnavailableReplicas: replicas - available, Conditions: conds,
	}
	if err := c.Status().Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
}

// statefulSet creates a StatefulSet of the app with the given replicas.
func statefulSet(t *testing.T, c client.Client, ns, project, app, component string, replicas int32) *appsv1.StatefulSet {
	t.Helper()
	name := app + "-" + component
	sel := map[string]string{"app.kubernetes.io/instance": name}
	d := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: appLabels(project, app, component)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: name + "-headless",
			Selector:    &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: component, Image: "registry.example.test/" + name + ":v1"}}},
			},
		},
	}
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// setStatefulSetStatus writes a StatefulSet's status as its controller
// would: updated replicas run revision "v2", the others "v1".
func setStatefulSetStatus(t *testing.T, c client.Client, d *appsv1.StatefulSet, replicas, updated, ready int32) {
	t.Helper()
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	current := "v1"
	if updated == replicas {
		current = "v2"
	}
	d.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: updated, CurrentReplicas: replicas,
		ReadyReplicas: ready, AvailableReplicas: ready, CurrentRevision: current, UpdateRevision: "v2",
	}
	if err := c.Status().Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
}

func TestReadinessAgainstAPIServer(t *testing.T) {
	t.Parallel()
	c := env.Client
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: ProgressDeadlineExceeded, Message: `ReplicaSet "api-web-5d9c" has timed out progressing.`}
	tests := []struct {
		name    string
		setup   func(t *testing.T, ns string)
		state   State
		msgPart string
		paused  bool
	}{
		{"no status yet", func(t *testing.T, ns string) {
			deployment(t, c, ns, ns, "api", "web", 2)
		}, StateProgressing, "api-web: waiting for the Deployment controller to observe the latest spec", false},
		{"current", func(t *testing.T, ns string) {
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "web", 2), 2, 2, 2)
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "worker", 1), 1, 1, 1)
		}, StatePassed, "2 Deployments ready", false},
		{"old replicas left", func(t *testing.T, ns string) {
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "web", 2), 3, 2, 2)
		}, StateProgressing, "1 old replicas pending termination", false},
		{"not all available", func(t *testing.T, ns string) {
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "web", 2), 2, 2, 1)
		}, StateProgressing, "2/2 updated, 1/2 available", false},
		{"progress deadline exceeded", func(t *testing.T, ns string) {
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "web", 2), 2, 1, 0, deadline)
		}, StateFailed, "progress deadline exceeded", false},
		{"paused", func(t *testing.T, ns string) {
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "web", 0), 0, 0, 0)
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "worker", 0), 0, 0, 0)
		}, StatePassed, "paused", true},
		{"no Deployments", func(*testing.T, string) {}, StatePassed, "no Deployments", false},
		{"StatefulSet current", func(t *testing.T, ns string) {
			setDeploymentStatus(t, c, deployment(t, c, ns, ns, "api", "web", 1), 1, 1, 1)
			setStatefulSetStatus(t, c, statefulSet(t, c, ns, ns, "api", "db", 2), 2, 2, 2)
		}, StatePassed, "2 workloads ready", false},
		{"StatefulSet without status", func(t *testing.T, ns string) {
			statefulSet(t, c, ns, ns, "api", "db", 2)
		}, StateProgressing, "api-db: waiting for the StatefulSet controller to observe the latest spec", false},
		{"StatefulSet rolling", func(t *testing.T, ns string) {
			setStatefulSetStatus(t, c, statefulSet(t, c, ns, ns, "api", "db", 2), 2, 1, 2)
		}, StateProgressing, "api-db: 1/2 updated, 2/2 ready", false},
		{"StatefulSet not ready", func(t *testing.T, ns string) {
			setStatefulSetStatus(t, c, statefulSet(t, c, ns, ns, "api", "db", 3), 3, 3, 1)
		}, StateProgressing, "3/3 updated, 1/3 ready", false},
		{"StatefulSet paused", func(t *testing.T, ns string) {
			setStatefulSetStatus(t, c, statefulSet(t, c, ns, ns, "api", "db", 0), 0, 0, 0)
		}, StatePassed, "paused: every workload is scaled to 0 replicas", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := env.Namespace(t)
			tc.setup(t, ns)
			// Another app in the namespace is not looked at.
			deployment(t, c, ns, ns, "other", "web", 3)
			p := &Prober{Client: c}
			chk, paused := p.Readiness(t.Context(), Target{App: layout.AppRef{Project: ns, Name: "api"}, Revision: rev})
			if chk.State != tc.state || paused != tc.paused || !strings.Contains(chk.Message, tc.msgPart) {
				t.Errorf("readiness = %s %q paused=%v, want %s containing %q paused=%v", chk.State, chk.Message, paused, tc.state, tc.msgPart, tc.paused)
			}
			// Each workload names the images it runs (the release).
			for _, w := range chk.Components {
				if want := "registry.example.test/" + w.Name + ":v1"; len(w.Images) != 1 || w.Images[0] != want {
					t.Errorf("%s %s images = %q, want %q", w.Kind, w.Name, w.Images, want)
				}
			}
		})
	}
}

// managed adds render's managed-by label.
func managed(l map[string]string) map[string]string {
	l[layout.LabelManagedBy] = layout.ManagedBy
	return l
}

// ingress creates an Ingress of the app for host with TLS.
func ingress(t *testing.T, c client.Client, ns, project, app, component, host string) {
	t.Helper()
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-" + component, Namespace: ns, Labels: managed(appLabels(project, app, component))},
		Spec: networkingv1.IngressSpec{
			TLS: []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: app + "-" + component + "-tls"}},
			Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: app + "-" + component, Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
			}}}},
		},
	}
	if err := c.Create(t.Context(), ing); err != nil {
		t.Fatal(err)
	}
}

func TestReachabilityAgainstAPIServer(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	ca := newCA(t)
	host := "api." + ns + ".example.test"
	ts := serveTLS(t, leaf(t, &ca, host, now.Add(-24*time.Hour), now.Add(60*24*time.Hour)))
	p := &Prober{Client: env.Client, AllowPrivate: true, Dial: dialTo(ts.Listener.Addr().String()), RootCAs: ca.pool, Clock: fixedClock{now}}
	target := Target{App: layout.AppRef{Project: ns, Name: "api"}, Revision: rev}

	chk, live := p.Reachability(t.Context(), target)
	if chk.State != StateSkipped || live != "" {
		t.Errorf("without an Ingress: %+v %q", chk, live)
	}
	ingress(t, env.Client, ns, ns, "api", "web", host)
	chk, live = p.Reachability(t.Context(), target)
	if chk.State != StatePassed || live != "https://"+host+"/" {
		t.Fatalf("reachability = %+v, live %q", chk, live)
	}
	var hosts []string
	for _, e := range chk.Endpoints {
		hosts = append(hosts, e.Host)
		if e.TLS == nil || e.TLS.DaysToExpiry != 60 || !e.TLS.Verified {
			t.Errorf("TLS = %+v", e.TLS)
		}
	}
	if diff := cmp.Diff([]string{host}, hosts); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	// Without the test CA the chain does not verify: not reachable yet.
	p.RootCAs = nil
	chk, _ = p.Reachability(t.Context(), target)
	if chk.State != StateProgressing || !strings.Contains(chk.Message, "unknown authority") {
		t.Errorf("untrusted chain: %+v", chk)
	}
}

// TestReachabilityProbesOnlyRenderedIngresses checks that an Ingress with
// the app's labels but not render's managed-by mark is never requested: an
// Ingress for localhost/internal-admin must not make the webhook call it.
func TestReachabilityProbesOnlyRenderedIngresses(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	var served atomicCount
	ts := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.add() }))
	t.Cleanup(ts.Close)
	p := &Prober{Client: env.Client, AllowPrivate: true, Dial: dialTo(ts.Listener.Addr().String())}
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: ns, Labels: appLabels(ns, "api", "web")},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "localhost", IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/internal-admin", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "admin", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}
	if err := env.Client.Create(t.Context(), ing); err != nil {
		t.Fatal(err)
	}
	chk, live := p.Reachability(t.Context(), Target{App: layout.AppRef{Project: ns, Name: "api"}, Revision: rev})
	if chk.State != StateSkipped || live != "" || len(chk.Endpoints) != 0 {
		t.Errorf("reachability = %+v %q, want skipped: the Ingress is not render's", chk, live)
	}
	if n := served.get(); n != 0 {
		t.Errorf("the unmarked Ingress's host was requested %d times", n)
	}
}
