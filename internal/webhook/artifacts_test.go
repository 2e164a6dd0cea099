package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// Fleet revisions and artifact revisions of the tests below.
const (
	revA = "main@sha1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	revB = "main@sha1:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	revC = "main@sha1:cccccccccccccccccccccccccccccccccccccccc"
	revD = "main@sha1:dddddddddddddddddddddddddddddddddddddddd"

	web1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	web2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	web3 = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	db1  = "sha256:dbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdbdb"
)

// ociFleet is an app of the fleet.artifacts layout in the test cluster:
// the root Kustomization (reading the fleet's GitRepository) applies, per
// component, an OCIRepository pinned by digest and a Kustomization reading
// it, as render writes them.
type ociFleet struct {
	fluxNS, project string
	root            *kustomizev1.Kustomization
	oci             map[string]*sourcev1.OCIRepository
	ks              map[string]*kustomizev1.Kustomization
}

func newOCIFleet(t testing.TB, fluxNS, project string, pins map[string]string) *ociFleet {
	t.Helper()
	f := &ociFleet{fluxNS: fluxNS, project: project, oci: map[string]*sourcev1.OCIRepository{}, ks: map[string]*kustomizev1.Kustomization{}}
	f.root = &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: fluxNS},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./clusters/prod", Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}},
	}
	if err := env.Client.Create(t.Context(), f.root); err != nil {
		t.Fatal(err)
	}
	for comp, digest := range pins {
		name := project + "-api-" + comp
		labels := map[string]string{layout.LabelApp: "api", layout.LabelProject: project, layout.LabelComponent: comp,
			layout.AppliedByNameLabel: f.root.Name, layout.AppliedByNamespaceLabel: fluxNS}
		annotations := map[string]string{layout.EventAnnotationPrefix + layout.EventApp: "api", layout.EventAnnotationPrefix + layout.EventProject: project, layout.EventAnnotationPrefix + layout.EventComponent: comp,
			layout.EventAnnotationPrefix + layout.EventSpecRevision: fixtureSpec}
		o := &sourcev1.OCIRepository{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fluxNS, Labels: labels, Annotations: annotations},
			Spec: sourcev1.OCIRepositorySpec{URL: "oci://registry.example.test/fleet", Interval: metav1.Duration{Duration: 10 * time.Minute},
				Reference: &sourcev1.OCIRepositoryRef{Digest: digest}},
		}
		k := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fluxNS, Labels: labels, Annotations: annotations},
			Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 10 * time.Minute}, Timeout: &metav1.Duration{Duration: 5 * time.Minute},
				Path: "./", Prune: true, Wait: true, TargetNamespace: project,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: name}},
		}
		for _, obj := range []client.Object{o, k} {
			if err := env.Client.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
		}
		f.oci[comp], f.ks[comp] = o, k
	}
	return f
}

// rootApplied writes the root's status as kustomize-controller does once it
// applied rev.
func (f *ociFleet) rootApplied(t testing.TB, rev string) { t.Helper(); setApplied(t, f.root, rev) }

// pin changes a component's OCIRepository's digest, as the root does when
// it applies a fleet revision that changed the component.
func (f *ociFleet) pin(t testing.TB, comp, digest string) {
	t.Helper()
	o := f.oci[comp]
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	o.Spec.Reference.Digest = digest
	if err := env.Client.Update(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}

// synced writes a component as Flux leaves it once it rolled digest out:
// source-controller stored the artifact, kustomize-controller applied it.
func (f *ociFleet) synced(t testing.TB, comp, digest string) {
	t.Helper()
	o := f.oci[comp]
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	path := "ocirepository/" + o.Namespace + "/" + o.Name + "/" + strings.TrimPrefix(digest, "sha256:") + ".tar.gz"
	o.Status.ObservedGeneration = o.Generation
	o.Status.Artifact = &meta.Artifact{Path: path, URL: "http://source-controller.flux-system.svc.cluster.local./" + path,
		Revision: digest, Digest: "sha256:5e0f6c1d2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5", LastUpdateTime: now, Size: ptr.To(int64(2048))}
	o.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason,
		Message: "stored artifact for digest '" + digest + "'", ObservedGeneration: o.Generation, LastTransitionTime: now}}
	if err := env.Client.Status().Update(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	setApplied(t, f.ks[comp], digest)
}

// event is what notification-controller forwards of a component's
// Kustomization's report at digest.
func (f *ociFleet) event(t testing.TB, comp, digest, msg string) []byte {
	t.Helper()
	return fixture(t, "kustomization-succeeded", withApp(f.project, "api"), withRevision(digest), withMessage(msg), func(ev *eventv1.Event) {
		ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = f.fluxNS, f.project+"-api-"+comp
		ev.Metadata[metaPrefix+"component"] = comp
	})
}

// webWorkload creates the Deployment of the app's web component, available.
func webWorkload(t *testing.T, project string) {
	t.Helper()
	sel := map[string]string{"app.kubernetes.io/instance": "api-web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api-web", Namespace: project,
			Labels: map[string]string{layout.LabelApp: "api", layout.LabelProject: project, layout.LabelComponent: "web"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.test/web:v1"}}}}},
	}
	if err := env.Client.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	if err := env.Client.Status().Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
}

// TestClusterArtifactsJourney follows an app of the fleet.artifacts layout
// through fleet revisions: its events carry artifact revisions, and land
// on the fleet revision that pinned them; a fleet revision that changed
// another app leaves its deployment running; an event of a digest no
// longer pinned is not the current revision's; the app's deletion ends its
// deployment deleted.
func TestClusterArtifactsJourney(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	f := newOCIFleet(t, fluxNS, project, map[string]string{"web": web1, "db": db1})
	webWorkload(t, project)
	fake := newFakeGitHub(t, []expectation{
		{"POST", "/repos/acme/fleet/deployments", map[string]any{
			"ref": commitOf(revA), "task": "deploy", "auto_merge": false, "required_contexts": []any{},
			"environment": project + "/api", "description": project + "/api at " + revA,
			"payload": map[string]any{"project": project, "app": "api", "revision": revA, "spec_revision": fixtureSpec},
		}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "in_progress", "description": "deploying: readiness pending"}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "success", "description": "running: sync passed, readiness passed, reachability skipped"}},
		{"POST", "/repos/acme/fleet/deployments", map[string]any{
			"ref": commitOf(revB), "task": "deploy", "auto_merge": false, "required_contexts": []any{},
			"environment": project + "/api", "description": project + "/api at " + revB,
			"payload": map[string]any{"project": project, "app": "api", "revision": revB, "spec_revision": fixtureSpec},
		}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "in_progress", "description": "deploying: readiness pending"}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "success", "description": "running: sync passed, readiness passed, reachability skipped"}},
		{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": "inactive", "description": truncate("deleted: Flux pruned the app: every Flux Kustomization of "+
			project+"/api is being deleted: "+project+"-api-db, "+project+"-api-web", 140)}},
	})
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) {
		c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo}
	})

	// revA: the root applied the app's file; Flux rolled both components out.
	f.rootApplied(t, revA)
	f.synced(t, "web", web1)
	f.synced(t, "db", db1)
	first := e.mustPost(f.event(t, "web", web1, "Deployment/"+project+"/api-web created"), 200)
	got := e.waitPhase(project, "api", store.PhaseRunning)
	if got.Revision != revA {
		t.Fatalf("app at %q, want %s", got.Revision, revA)
	}
	fake.waitFor(t, 1, 2)
	if r := e.mustPost(f.event(t, "db", db1, "Reconciliation finished in 1.1s, next run in 10m0s"), 200); r.DeploymentID != first.DeploymentID {
		t.Errorf("db's event went to deployment %d, want %d (revA)", r.DeploymentID, first.DeploymentID)
	}

	// revB changes web only: the root pins web2; db gets no event. While
	// it is at it, revA's rechecks see web moved on, and keep it running.
	setKustomizationStatus(t, f.root, revA, revB, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionUnknown,
		Reason: meta.ProgressingReason, Message: "Reconciliation in progress"})
	f.pin(t, "web", web2)
	moved, ok := e.waitApp(project, "api", func(a store.App) bool { return strings.Contains(a.Message, "a later fleet revision changed the app") })
	if !ok || moved.Phase != store.PhaseRunning || moved.Revision != revA {
		t.Errorf("revA while the root pins web2: %+v, want running with a message that a later revision changed it", moved)
	}
	f.rootApplied(t, revB)
	f.synced(t, "web", web2)
	// source-controller's report of the new artifact, as
	// notification-controller forwards it, comes first.
	second := e.mustPost(fixture(t, "ocirepository-newartifact", func(ev *eventv1.Event) {
		ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = fluxNS, project+"-api-web"
		ev.Metadata["project"] = project
	}), 200)
	if second.DeploymentID == first.DeploymentID {
		t.Fatalf("revB's event joined revA's deployment")
	}
	if r := e.mustPost(f.event(t, "web", web2, "Deployment/"+project+"/api-web configured"), 200); r.DeploymentID != second.DeploymentID {
		t.Errorf("web's event at revB went to deployment %d, want %d", r.DeploymentID, second.DeploymentID)
	}
	got = e.waitPhase(project, "api", store.PhaseRunning)
	if got.Revision != revB || got.DeploymentID != second.DeploymentID {
		t.Fatalf("app = %+v, want running at %s", got, revB)
	}
	fake.waitFor(t, 2, 4)
	d, err := e.st.Deployment(t.Context(), second.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{project + "-api-web": web2, project + "-api-db": db1}
	if diff := cmp.Diff(want, recordedArtifacts(d)); diff != "" {
		t.Errorf("revB's recorded artifacts (-want +got):\n%s", diff)
	}
	page := get(t, e.srv.Handler(), "/apps/"+project+"/api", testToken).Body.String()
	if want := "<code>Kustomization/" + project + "-api-web</code><div class=\"msg\">reads <code>OCIRepository/" + project + "-api-web</code> at <code>" +
		web2 + "</code></div>"; !strings.Contains(page, want) {
		t.Errorf("the app page lacks %q", want)
	}

	// revC changes another app: the root moves on, api's objects stay
	// revB's, and its rechecks keep it running.
	f.rootApplied(t, revC)
	time.Sleep(500 * time.Millisecond) // rechecks run every 100ms
	if a, err := e.st.App(t.Context(), layout.AppRef{Project: project, Name: "api"}, ""); err != nil || a.Phase != store.PhaseRunning || a.Revision != revB {
		t.Errorf("after revC: %+v, %v; want running at %s", a, err, revB)
	}
	// web's periodic report, after the root moved on, is revB's.
	if r := e.mustPost(f.event(t, "web", web2, "Reconciliation finished in 0.8s, next run in 10m0s"), 200); r.DeploymentID != second.DeploymentID {
		t.Errorf("web's periodic event went to deployment %d, want %d (revB)", r.DeploymentID, second.DeploymentID)
	}
	// A late report of the digest revA pinned is revA's, not revB's.
	if r := e.mustPost(f.event(t, "web", web1, "Health check passed in 31s"), 200); r.DeploymentID != first.DeploymentID {
		t.Errorf("web1's late event went to deployment %d, want %d (revA)", r.DeploymentID, first.DeploymentID)
	}
	// A digest no deployment pinned belongs to none.
	if r := e.mustPost(f.event(t, "web", web3, "Deployment/"+project+"/api-web configured"), 202); r.Status != "ignored" {
		t.Errorf("unknown digest = %+v, want ignored", r)
	}
	if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->running", "running->pending", "pending->deploying", "deploying->running"}, e.walk(project, "api")); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}

	// revD removes the app: the root prunes its OCIRepositories and
	// Kustomizations, whose finalizers report what they deleted.
	f.rootApplied(t, revD)
	for _, k := range f.ks {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(k), k); err != nil {
			t.Fatal(err)
		}
		k.Finalizers = []string{kustomizev1.KustomizationFinalizer}
		if err := env.Client.Update(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	// One request marks both deleted: a recheck between two would see the
	// app half gone (degraded), as it would between the root's deletes.
	appOf := client.MatchingLabels{layout.LabelApp: "api", layout.LabelProject: project}
	for _, o := range []client.Object{&kustomizev1.Kustomization{}, &sourcev1.OCIRepository{}} {
		if err := env.Client.DeleteAllOf(t.Context(), o, client.InNamespace(fluxNS), appOf); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.mustPost(f.event(t, "web", web2, "Deployment/"+project+"/api-web deleted"), 200); r.DeploymentID != second.DeploymentID {
		t.Errorf("the pruning event went to deployment %d, want %d (revB)", r.DeploymentID, second.DeploymentID)
	}
	got = e.waitPhase(project, "api", store.PhaseDeleted)
	if got.Revision != revB || !strings.Contains(got.Message, "every Flux Kustomization of "+project+"/api is being deleted") {
		t.Errorf("app = %+v, want revB deleted", got)
	}
	fake.wait(t)
}

// waitFor waits until the fake GitHub has deps deployments and statuses statuses.
func (f *fakeGitHub) waitFor(t *testing.T, deps, statuses int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ds := f.Deployments(fleetRepo.String())
		n := 0
		for _, d := range ds {
			n += len(d.Statuses)
		}
		if len(ds) == deps && n == statuses {
			return
		}
	}
	t.Fatalf("GitHub did not get %d deployments with %d statuses; requests: %v", deps, statuses, f.Requests())
}

// TestFleetRevisionOf checks the rules that map an event's artifact
// revision to a fleet revision, on a real API server and store.
func TestFleetRevisionOf(t *testing.T) {
	t.Parallel()
	type deployment struct {
		rev     string
		pins    map[string]string // by component: what its checks recorded
		deleted bool
	}
	tests := []struct {
		name        string
		pinned      string // web's OCIRepository's digest now
		root        string // what the root applied ("" none)
		noOwner     bool   // the OCIRepository has no owner labels
		deployments []deployment
		remembered  map[string]string // digest → revision credited before
		deleting    bool
		ociEvent    bool // the event is source-controller's, of the OCIRepository
		event       string
		want        string
		wantErr     error
	}{
		{name: "first word of a pin", pinned: web1, root: revA, event: web1, want: revA},
		{name: "source-controller's first word of a pin", pinned: web2, root: revB, ociEvent: true,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web1}}}, event: web2, want: revB},
		{name: "source-controller's word of the current pin", pinned: web2, root: revC, ociEvent: true,
			deployments: []deployment{{rev: revB, pins: map[string]string{"web": web2}}}, event: web2, want: revB},
		{name: "first word of a pin after the root applied another revision", pinned: web2, root: revC,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web1}}}, event: web2, want: revC},
		{name: "the first report after the fleet switched to artifacts", pinned: web1, root: revB,
			deployments: []deployment{{rev: revA}}, event: web1, want: revB},
		{name: "the current deployment pins it", pinned: web2, root: revC,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web1}}, {rev: revB, pins: map[string]string{"web": web2}}}, event: web2, want: revB},
		{name: "inherited from the deployment before", pinned: web2, root: revC,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web2, "db": db1}}, {rev: revB, pins: map[string]string{"db": db1}}}, event: web2, want: revB},
		{name: "inherited, but a later pin replaced it", pinned: web2, root: revB,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web1}}, {rev: revB, pins: map[string]string{"db": db1}}}, event: web1, want: revA},
		{name: "credited before and still pinned", pinned: web2, root: revC,
			deployments: []deployment{{rev: revA, pins: map[string]string{"db": db1}}, {rev: revB}}, remembered: map[string]string{web2: revA}, event: web2, want: revB},
		{name: "pinned again after a revert", pinned: web1, root: revC,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web1}}, {rev: revB, pins: map[string]string{"web": web2}}}, remembered: map[string]string{web1: revA},
			event: web1, want: revC},
		{name: "late event of an older pin", pinned: web3, root: revC,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web1}}, {rev: revB, pins: map[string]string{"web": web2}}, {rev: revC, pins: map[string]string{"web": web3}}},
			event:       web1, want: revA},
		{name: "late event of an older pin, remembered", pinned: web3, root: revC,
			deployments: []deployment{{rev: revB, pins: map[string]string{"web": web2}}, {rev: revC, pins: map[string]string{"web": web3}}}, remembered: map[string]string{web1: revA},
			event: web1, want: revA},
		{name: "a digest no deployment pinned", pinned: web3, root: revC,
			deployments: []deployment{{rev: revB, pins: map[string]string{"web": web2}}}, event: web1, wantErr: errNoFleetRevision},
		{name: "the app is being deleted", pinned: web2, root: revD, deleting: true,
			deployments: []deployment{{rev: revB}}, event: web2, want: revB},
		{name: "re-added with the same artifacts", pinned: web1, root: revC,
			deployments: []deployment{{rev: revA, pins: map[string]string{"web": web1}}, {rev: revB, deleted: true}}, remembered: map[string]string{web1: revA},
			event: web1, want: revC},
		{name: "no applier, no deployment", pinned: web1, noOwner: true, event: web1, wantErr: errNoFleetRevision},
		{name: "no applier, a deployment", pinned: web1, noOwner: true, deployments: []deployment{{rev: revA}}, event: web1, want: revA},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			project, fluxNS := env.Namespace(t), env.Namespace(t)
			f := newOCIFleet(t, fluxNS, project, map[string]string{"web": tc.pinned})
			if tc.root != "" {
				f.rootApplied(t, tc.root)
			}
			if tc.noOwner {
				o := f.oci["web"]
				delete(o.Labels, layout.AppliedByNameLabel)
				if err := env.Client.Update(t.Context(), o); err != nil {
					t.Fatal(err)
				}
			}
			if tc.deleting {
				k := f.ks["web"]
				k.Finalizers = []string{kustomizev1.KustomizationFinalizer}
				if err := env.Client.Update(t.Context(), k); err != nil {
					t.Fatal(err)
				}
				for _, o := range []client.Object{k, f.oci["web"]} {
					if err := env.Client.Delete(t.Context(), o); err != nil {
						t.Fatal(err)
					}
				}
			}
			e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) { c.RecheckInterval = -1 })
			for i, d := range tc.deployments {
				id := recordPinned(t, e.st, project, d.rev, i, d.pins)
				if d.deleted {
					if _, err := e.st.UpdateDeployment(t.Context(), store.DeploymentUpdate{ID: id, Phase: store.PhaseDeleted,
						Message: "Flux pruned the app", Checks: json.RawMessage(`{"checks":[]}`), UpdatedAt: time.Now()}); err != nil {
						t.Fatal(err)
					}
				}
			}
			for digest, rev := range tc.remembered {
				e.srv.pins.put(pinKey{app: project + "/api", name: project + "-api-web", digest: digest}, rev)
			}
			kind := kustomizev1.KustomizationKind
			if tc.ociEvent {
				kind = sourcev1.OCIRepositoryKind
			}
			got, err := e.srv.fleetRevisionOf(t.Context(), kind, fluxNS, project+"-api-web", layout.AppRef{Project: project, Name: "api"}, "", tc.event)
			if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("fleetRevisionOf = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// recordPinned stores a deployment of project/api at rev whose sync
// check recorded pins (by component) as rev's, as the tracker writes it.
func recordPinned(t testing.TB, st store.Store, project, rev string, i int, pins map[string]string) int64 {
	t.Helper()
	// Recent: the server's prune at start keeps it.
	now := time.Now().UTC().Add(time.Duration(i) * time.Millisecond)
	recs, err := st.RecordEvents(t.Context(), []store.Event{{
		DedupeKey: project + rev, ReceivedAt: now, EventTime: now, Kind: kustomizev1.KustomizationKind, Name: project + "-api-web",
		Severity: "info", Reason: meta.ReconciliationSucceededReason, Revision: rev, App: layout.AppRef{Project: project, Name: "api"}, Component: "web",
		Health: store.HealthHealthy,
	}}, now)
	if err != nil {
		t.Fatal(err)
	}
	res := probe.NewResult()
	res.Checks[0].State = probe.StatePassed
	for comp, digest := range pins {
		res.Checks[0].Components = append(res.Checks[0].Components, probe.ComponentStatus{Component: comp, Kind: kustomizev1.KustomizationKind,
			Name: project + "-api-" + comp, State: probe.StatePassed, Revision: digest, Source: "OCIRepository/" + project + "-api-" + comp, Artifact: digest})
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateDeployment(t.Context(), store.DeploymentUpdate{ID: recs[0].DeploymentID, Phase: store.PhaseRunning, Checks: raw,
		Timeout: time.Minute, FinishedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return recs[0].DeploymentID
}

// TestArtifactEventsWithoutCluster checks that without a cluster an event
// of an artifact revision joins the app's current deployment, and starts
// none: no deployment is keyed by an artifact revision.
func TestArtifactEventsWithoutCluster(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	if r := e.mustPost(fixture(t, "kustomization-progressing", withRevision(web1)), 202); r.Status != "ignored" {
		t.Errorf("artifact event before any deployment = %+v, want ignored", r)
	}
	first := e.mustPost(fixture(t, "kustomization-progressing"), 200)
	if r := e.mustPost(fixture(t, "kustomization-succeeded", withRevision(web1)), 200); r.DeploymentID != first.DeploymentID {
		t.Errorf("artifact event went to deployment %d, want the current one, %d", r.DeploymentID, first.DeploymentID)
	}
	ds, err := e.st.Deployments(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, 10, 0)
	if err != nil || len(ds) != 1 || ds[0].Revision != rev1 {
		t.Errorf("deployments = %+v, %v; want one at %s", ds, err, rev1)
	}
}

// TestFleetRevisionOfWhileTheRootApplies checks that the first report of a
// pin, while the root is applying a revision (its status still names the
// previous one), waits for the root to finish, and is refused when it does
// not in time.
func TestFleetRevisionOfWhileTheRootApplies(t *testing.T) {
	t.Parallel()
	applying := func(t *testing.T, f *ociFleet) {
		t.Helper()
		setKustomizationStatus(t, f.root, revA, revB, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionUnknown,
			Reason: meta.ProgressingReason, Message: "Reconciliation in progress"})
	}
	t.Run("settles", func(t *testing.T) {
		t.Parallel()
		project, fluxNS := env.Namespace(t), env.Namespace(t)
		f := newOCIFleet(t, fluxNS, project, map[string]string{"web": web2})
		applying(t, f)
		e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) { c.RecheckInterval = -1 })
		recordPinned(t, e.st, project, revA, 0, map[string]string{"web": web1})
		done := make(chan error, 1)
		go func() {
			time.Sleep(3 * settlePoll)
			// The root finishes: kustomize-controller's last status patch.
			root := f.root.DeepCopy()
			root.Status.LastAppliedRevision = revB
			root.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.ReconciliationSucceededReason,
				Message: "Applied revision: " + revB, ObservedGeneration: root.Generation, LastTransitionTime: metav1.Now()}}
			done <- env.Client.Status().Update(context.Background(), root)
		}()
		got, err := e.srv.fleetRevisionOf(t.Context(), kustomizev1.KustomizationKind, fluxNS, project+"-api-web", layout.AppRef{Project: project, Name: "api"}, "", web2)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got != revB || err != nil {
			t.Errorf("fleetRevisionOf = %q, %v; want %s", got, err, revB)
		}
	})
	t.Run("does not settle", func(t *testing.T) {
		t.Parallel()
		project, fluxNS := env.Namespace(t), env.Namespace(t)
		f := newOCIFleet(t, fluxNS, project, map[string]string{"web": web2})
		applying(t, f)
		e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) { c.RecheckInterval = -1 })
		ctx, cancel := context.WithTimeout(t.Context(), 20*settlePoll)
		defer cancel()
		got, err := e.srv.fleetRevisionOf(ctx, kustomizev1.KustomizationKind, fluxNS, project+"-api-web", layout.AppRef{Project: project, Name: "api"}, "", web2)
		if want := "is still applying " + revB; got != "" || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fleetRevisionOf = %q, %v; want an error containing %q", got, err, want)
		}
	})
}

// TestPinMemory checks that the memory of credited pins forgets the oldest
// first and answers by fleet revision what it still holds.
func TestPinMemory(t *testing.T) {
	t.Parallel()
	m := newPinMemory(3)
	k := func(name, digest string) pinKey { return pinKey{app: "shop/api", name: name, digest: digest} }
	m.put(k("web", web1), revA)
	m.put(k("db", db1), revA)
	m.put(k("web", web2), revB)
	m.put(k("web", web1), revC) // credited again: not a new entry
	if diff := cmp.Diff(map[string]string{"db": db1}, m.of("shop/api", revA)); diff != "" {
		t.Errorf("of(revA) (-want +got):\n%s", diff)
	}
	m.put(k("web", web3), revC) // the fourth entry: the oldest, web1, goes
	if _, ok := m.get(k("web", web1)); ok {
		t.Error("the oldest entry is still held")
	}
	if diff := cmp.Diff(map[string]string{"web": web3}, m.of("shop/api", revC)); diff != "" {
		t.Errorf("of(revC) (-want +got):\n%s", diff)
	}
	if r, ok := m.get(k("web", web2)); !ok || r != revB {
		t.Errorf("web2 = %q, %v; want %s", r, ok, revB)
	}
	if got := m.of("shop/cart", revB); len(got) != 0 {
		t.Errorf("another app's pins: %v", got)
	}
	if len(m.revs) != 3 || len(m.order) != 3 {
		t.Errorf("holds %d entries in order of %d, want 3", len(m.revs), len(m.order))
	}
}

// TestArtifactEventResolvedFromCluster checks that source-controller's
// report of an OCIRepository without the app's metadata finds the app by
// the OCIRepository's labels, and its fleet revision by its pin.
func TestArtifactEventResolvedFromCluster(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	f := newOCIFleet(t, fluxNS, project, map[string]string{"web": web2})
	f.rootApplied(t, revB)
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) { c.RecheckInterval = -1 })
	body := fixture(t, "ocirepository-newartifact", func(ev *eventv1.Event) {
		ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = fluxNS, project+"-api-web"
		ev.Metadata = map[string]string{"revision": web2}
	})
	r := e.mustPost(body, 200)
	if r.Project != project || r.App != "api" {
		t.Fatalf("answer = %+v, want %s/api", r, project)
	}
	d, err := e.st.Deployment(t.Context(), r.DeploymentID)
	if err != nil || d.Revision != revB {
		t.Errorf("deployment = %+v, %v; want one at %s", d, err, revB)
	}
	evs, err := e.st.Events(t.Context(), layout.AppRef{Project: project, Name: "api"}, 1)
	if err != nil || len(evs) != 1 || evs[0].Component != "web" || evs[0].Kind != sourcev1.OCIRepositoryKind || evs[0].Revision != revB {
		t.Errorf("stored = %+v, %v", evs, err)
	}
}
