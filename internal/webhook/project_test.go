package webhook

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/probe/fleettest"
	"github.com/fleetwright/fleetwright/internal/store"
)

// projectFleet renders the app api of project, one component web at
// image, with fleet.artifacts: a source per project.
func projectFleet(t testing.TB, project, image string) *fleettest.Fleet {
	t.Helper()
	return fleettest.Render(t, map[string][]byte{
		"platform.yaml": []byte("apps_domain: apps.test\nclusters: [{name: prod}]\nbuild: {pin: false}\nfleet:\n  artifacts: {repository: registry.example.test/fleet}\n"),
		"apps/" + project + "/api/app.yaml": []byte("name: api\ncomponents:\n  - {name: web, type: workload, workload_spec: {image: " +
			image + ", port: 8080}}\n"),
	}, nil, fixtureSpec)
}

// projectScene is project/api in the test cluster as Flux applied a
// rendered fleet: the root Kustomization (flux-system, reading the fleet's
// GitRepository) applied the project's OCIRepository and Kustomization,
// which applied the app's.
type projectScene struct {
	project, fluxNS string
	root            *kustomizev1.Kustomization
	objs            fleettest.Objects
}

func newProjectScene(t testing.TB, project, fluxNS string, f *fleettest.Fleet) *projectScene {
	t.Helper()
	s := &projectScene{project: project, fluxNS: fluxNS}
	s.root = &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: fluxNS},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./clusters/prod", Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}},
	}
	if err := env.Client.Create(t.Context(), s.root); err != nil {
		t.Fatal(err)
	}
	s.objs = f.App(t, "prod", project, "api")
	if !s.objs.InProject {
		t.Fatal("the app's Flux objects are not in its project's Flux folder")
	}
	s.objs.Create(t, env.Client, fluxNS, s.root.Name)
	return s
}

func (s *projectScene) web() (*sourcev1.OCIRepository, *kustomizev1.Kustomization) {
	name := s.project + "-api-web"
	return s.objs.Sources[name], s.objs.Kustomizations[name]
}

// pin changes the digest an OCIRepository asks for, as the Kustomization
// that applies it does when it applies a new revision.
func pin(t testing.TB, o *sourcev1.OCIRepository, digest string) {
	t.Helper()
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	o.Spec.Reference.Digest = digest
	if err := env.Client.Update(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}

// rootApplies leaves the root as kustomize-controller does once it
// applied rev of fleet f: the project's OCIRepository pins f's project
// artifact.
func (s *projectScene) rootApplies(t testing.TB, rev string, f *fleettest.Fleet) {
	t.Helper()
	setKustomizationStatus(t, s.root, s.root.Status.LastAppliedRevision, rev, applying)
	pin(t, s.objs.ProjectSource, f.App(t, "prod", s.project, "api").ProjectSource.Spec.Reference.Digest)
	setApplied(t, s.root, rev)
}

// applying is kustomize-controller's Ready condition while it applies a revision.
var applying = metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionUnknown, Reason: meta.ProgressingReason, Message: "Reconciliation in progress"}

// projectApplies leaves the project's objects as Flux does once it
// applied f's project artifact: the component's OCIRepository pins f's
// digest of it.
func (s *projectScene) projectApplies(t testing.TB, f *fleettest.Fleet) {
	t.Helper()
	o, _ := s.web()
	p := s.objs.ProjectSource.Spec.Reference.Digest
	fleettest.SetSource(t, env.Client, s.objs.ProjectSource, p, true, fleettest.Stored(p))
	fleettest.SetKustomization(t, env.Client, s.objs.Project, s.objs.Project.Status.LastAppliedRevision, p, applying)
	pin(t, o, f.App(t, "prod", s.project, "api").Sources[o.Name].Spec.Reference.Digest)
	fleettest.SetKustomization(t, env.Client, s.objs.Project, p, p, fleettest.Applied(p))
}

// projectEvent is what notification-controller forwards of an event of
// the project's Kustomization or OCIRepository: annotated with the project
// alone.
func (s *projectScene) projectEvent(t testing.TB, kind, severity, reason, rev, msg string) []byte {
	t.Helper()
	return fixture(t, "kustomization-succeeded", func(ev *eventv1.Event) {
		ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = kind, s.fluxNS, "project-"+s.project
		ev.Severity, ev.Reason, ev.Message = severity, reason, msg
		ev.Metadata = map[string]string{"revision": rev, metaPrefix + "project": s.project}
	})
}

// componentEvent is a report of the component's Kustomization at digest.
func (s *projectScene) componentEvent(t testing.TB, digest, msg string) []byte {
	t.Helper()
	return fixture(t, "kustomization-succeeded", withApp(s.project, "api"), withRevision(digest), withMessage(msg), func(ev *eventv1.Event) {
		ev.InvolvedObject.Namespace = s.fluxNS
	})
}

// TestProjectSourceJourney follows an app whose Flux objects its project's
// Kustomization applies from the project's artifact: a component's events
// land on the fleet revision whose project artifact pinned their digest;
// the project's own events are no app's and change no deployment; a
// project artifact that does not build leaves the app running at the
// revision it runs; and the project's Kustomization pruning the app ends
// it deleted. GitHub gets the statuses of those phases.
func TestProjectSourceJourney(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	fA, fB, fC := projectFleet(t, project, "registry.example.test/web:1"), projectFleet(t, project, "registry.example.test/web:2"),
		projectFleet(t, project, "registry.example.test/web:3")
	s := newProjectScene(t, project, fluxNS, fA)
	webWorkload(t, project)
	deployment := func(rev string) expectation {
		return expectation{"POST", "/repos/acme/fleet/deployments", map[string]any{
			"ref": commitOf(rev), "task": "deploy", "auto_merge": false, "required_contexts": []any{},
			"environment": project + "/api", "description": project + "/api at " + rev,
			"payload": map[string]any{"project": project, "app": "api", "revision": rev, "spec_revision": fixtureSpec},
		}}
	}
	status := func(state, desc string) expectation {
		return expectation{"POST", "/repos/acme/fleet/deployments/*/statuses", map[string]any{"state": state, "description": desc}}
	}
	fake := newFakeGitHub(t, []expectation{
		deployment(revA),
		status("in_progress", "deploying: readiness pending"),
		status("success", "running: sync passed, readiness passed, reachability skipped"),
		deployment(revB),
		status("in_progress", "deploying: readiness pending"),
		status("success", "running: sync passed, readiness passed, reachability skipped"),
		status("inactive", truncate("deleted: Flux pruned the app: every Flux Kustomization of "+project+"/api is being deleted: "+project+"-api-web", 140)),
	})
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) {
		c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo}
	})
	o, k := s.web()
	webA := o.Spec.Reference.Digest

	// revA: Flux rolled the app out through its project.
	setApplied(t, s.root, revA)
	fleettest.Synced(t, env.Client, s.objs.ProjectSource, s.objs.Project)
	fleettest.Synced(t, env.Client, o, k)
	first := e.mustPost(s.componentEvent(t, webA, "Deployment/"+project+"/api-web created"), 200)
	if got := e.waitPhase(project, "api", store.PhaseRunning); got.Revision != revA {
		t.Fatalf("app at %q, want %s", got.Revision, revA)
	}
	fake.waitFor(t, 1, 2)

	// revB changes web: the root pins the project's new artifact, which
	// source-controller reports; the project's Kustomization applies it.
	s.rootApplies(t, revB, fB)
	projectB := s.objs.ProjectSource.Spec.Reference.Digest
	if r := e.mustPost(s.projectEvent(t, sourcev1.OCIRepositoryKind, eventv1.EventSeverityInfo, "NewArtifact", projectB,
		"stored artifact with revision '"+projectB+"'"), 202); r.Status != "ignored" || r.App != "" {
		t.Errorf("the project's OCIRepository's event = %+v, want ignored", r)
	}
	s.projectApplies(t, fB)
	if r := e.mustPost(s.projectEvent(t, kustomizev1.KustomizationKind, eventv1.EventSeverityInfo, meta.ReconciliationSucceededReason, projectB,
		"OCIRepository/"+project+"-api-web configured\nKustomization/"+project+"-api-web configured"), 202); r.Status != "ignored" || r.App != "" {
		t.Errorf("the project's Kustomization's event = %+v, want ignored", r)
	}
	webB := o.Spec.Reference.Digest
	if webB == webA {
		t.Fatal("a new image left the component's artifact as it was")
	}
	// source-controller's first report of the component's new artifact,
	// which kustomize-controller applies.
	fleettest.Synced(t, env.Client, o, k)
	second := e.mustPost(fixture(t, "ocirepository-newartifact", withRevision(webB), func(ev *eventv1.Event) {
		ev.InvolvedObject.Namespace, ev.InvolvedObject.Name = fluxNS, project+"-api-web"
		ev.Metadata["project"] = project
	}), 200)
	if second.DeploymentID == first.DeploymentID {
		t.Fatal("revB's event joined revA's deployment")
	}
	d, err := e.st.Deployment(t.Context(), second.DeploymentID)
	if err != nil || d.Revision != revB {
		t.Fatalf("the component's new artifact went to %+v, %v; want a deployment of %s", d, err, revB)
	}
	if r := e.mustPost(s.componentEvent(t, webB, "Deployment/"+project+"/api-web configured"), 200); r.DeploymentID != second.DeploymentID {
		t.Errorf("web's event at revB went to deployment %d, want %d", r.DeploymentID, second.DeploymentID)
	}
	if got := e.waitPhase(project, "api", store.PhaseRunning); got.DeploymentID != second.DeploymentID {
		t.Fatalf("app = %+v, want running at %s", got, revB)
	}
	fake.waitFor(t, 2, 4)
	d, err = e.st.Deployment(t.Context(), second.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	sync := decodeResult(d).Check(probe.CheckSync)
	if len(sync.Components) != 1 || sync.Components[0].Artifact != webB || sync.Components[0].ProjectArtifact != projectB {
		t.Errorf("revB's sync check recorded %+v, want %s through the project's %s", sync.Components, webB, projectB)
	}
	page := get(t, e.srv.Handler(), "/apps/"+project+"/api", testToken).Body.String()
	if want := "reads <code>OCIRepository/" + project + "-api-web</code> at <code>" + webB + "</code>, applied from <code>OCIRepository/project-" +
		project + "</code> at <code>" + projectB + "</code>"; !strings.Contains(page, want) {
		t.Errorf("the app page lacks %q", want)
	}

	// revC's project artifact does not build: the project's Kustomization
	// fails it, its event is no app's, and the app keeps running revB.
	s.rootApplies(t, revC, fC)
	projectC := s.objs.ProjectSource.Spec.Reference.Digest
	fleettest.SetSource(t, env.Client, s.objs.ProjectSource, projectC, true, fleettest.Stored(projectC))
	buildFailed := "kustomize build failed: accumulating resources from 'api.yaml'"
	fleettest.SetKustomization(t, env.Client, s.objs.Project, projectB, projectC,
		fleettest.Condition(meta.ReadyCondition, metav1.ConditionFalse, meta.BuildFailedReason, buildFailed))
	if r := e.mustPost(s.projectEvent(t, kustomizev1.KustomizationKind, eventv1.EventSeverityError, meta.BuildFailedReason, projectC, buildFailed), 202); r.Status != "ignored" {
		t.Errorf("the project's failure = %+v, want ignored", r)
	}
	time.Sleep(500 * time.Millisecond) // rechecks run every 100ms
	if a, err := e.st.App(t.Context(), layout.AppRef{Project: project, Name: "api"}, ""); err != nil || a.Phase != store.PhaseRunning || a.DeploymentID != second.DeploymentID {
		t.Errorf("after revC's failure: %+v, %v; want running at %s", a, err, revB)
	}
	if ds, err := e.st.Deployments(t.Context(), layout.AppRef{Project: project, Name: "api"}, 10, 0); err != nil || len(ds) != 2 {
		t.Errorf("deployments = %d, %v; want revA's and revB's", len(ds), err)
	}

	// revD removes the app: the project's Kustomization prunes its
	// OCIRepository and Kustomization, whose finalizer reports it.
	s.rootApplies(t, revD, fC)
	fleettest.Synced(t, env.Client, s.objs.ProjectSource, s.objs.Project)
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	k.Finalizers = []string{kustomizev1.KustomizationFinalizer}
	if err := env.Client.Update(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	appOf := client.MatchingLabels{layout.LabelApp: "api", layout.LabelProject: project}
	for _, obj := range []client.Object{&kustomizev1.Kustomization{}, &sourcev1.OCIRepository{}} {
		if err := env.Client.DeleteAllOf(t.Context(), obj, client.InNamespace(fluxNS), appOf); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.mustPost(s.componentEvent(t, webB, "Deployment/"+project+"/api-web deleted"), 200); r.DeploymentID != second.DeploymentID {
		t.Errorf("the pruning event went to deployment %d, want %d (revB)", r.DeploymentID, second.DeploymentID)
	}
	if got := e.waitPhase(project, "api", store.PhaseDeleted); got.DeploymentID != second.DeploymentID {
		t.Errorf("app = %+v, want revB deleted", got)
	}
	fake.wait(t)
	if diff := cmp.Diff([]string{"->pending", "pending->deploying", "deploying->running", "running->pending", "pending->deploying", "deploying->running", "running->deleted"},
		e.walk(project, "api")); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
}

// TestProjectEventWakesChecks checks that an event of the project's own
// objects wakes the checks of the project's apps at once, and that a
// failure of the project's source fails a deployment whose objects wait
// on it, with the source's message.
func TestProjectEventWakesChecks(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	s := newProjectScene(t, project, fluxNS, projectFleet(t, project, "registry.example.test/web:1"))
	webWorkload(t, project)
	// Without a wake-up the checks would not run again for an hour.
	e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) {
		c.RecheckInterval = -1
		c.Backoff = probe.Backoff{Initial: time.Hour, Max: time.Hour}
	})
	o, _ := s.web()
	setApplied(t, s.root, revA)
	fleettest.Synced(t, env.Client, s.objs.ProjectSource, s.objs.Project)
	fleettest.SetSource(t, env.Client, o, web1, true,
		fleettest.Condition(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "reconciliation in progress"))
	e.mustPost(s.componentEvent(t, o.Spec.Reference.Digest, "Deployment/"+project+"/api-web created"), 200)
	waiting := "waiting for source-controller to pull " + o.Spec.Reference.Digest
	if a, ok := e.waitApp(project, "api", func(a store.App) bool { return strings.Contains(a.Message, waiting) }); !ok {
		t.Fatalf("app = %+v, want a message containing %q", a, waiting)
	}

	invalid := "URL must be in format 'oci://<domain>/<org>/<repo>'"
	fleettest.SetSource(t, env.Client, s.objs.ProjectSource, "", true,
		fleettest.Condition(meta.ReadyCondition, metav1.ConditionFalse, sourcev1.URLInvalidReason, invalid),
		fleettest.Condition(meta.StalledCondition, metav1.ConditionTrue, sourcev1.URLInvalidReason, invalid))
	e.mustPost(s.projectEvent(t, sourcev1.OCIRepositoryKind, eventv1.EventSeverityError, sourcev1.URLInvalidReason,
		s.objs.ProjectSource.Spec.Reference.Digest, invalid), 202)
	got := e.waitPhase(project, "api", store.PhaseFailed)
	if want := "sync check failed: " + project + "-api-web: OCIRepository " + fluxNS + "/project-" + project + " stalled: URLInvalid: " + invalid; got.Message != want {
		t.Errorf("message = %q, want %q", got.Message, want)
	}
}

// TestFleetRevisionOfThroughProject checks that the first report of a
// component's pin, applied by its project's Kustomization, is credited to
// the fleet revision the root applied once that Kustomization applied the
// artifact its OCIRepository pins, and to none while that is not known.
func TestFleetRevisionOfThroughProject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// project sets the project's objects after the root applied revB.
		project func(t *testing.T, s *projectScene)
		// later changes them while the webhook waits.
		later   func(s *projectScene) error
		want    string
		wantErr string
	}{
		{name: "the project's Kustomization applied the pin", project: func(t *testing.T, s *projectScene) {
			fleettest.Synced(t, env.Client, s.objs.ProjectSource, s.objs.Project)
		}, want: revB},
		{name: "the project's Kustomization is applying the pin", project: func(t *testing.T, s *projectScene) {
			p := s.objs.ProjectSource.Spec.Reference.Digest
			fleettest.SetSource(t, env.Client, s.objs.ProjectSource, p, true, fleettest.Stored(p))
			fleettest.SetKustomization(t, env.Client, s.objs.Project, web1, p,
				fleettest.Condition(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "Reconciliation in progress"))
		}, later: func(s *projectScene) error {
			k := s.objs.Project.DeepCopy()
			p := s.objs.ProjectSource.Spec.Reference.Digest
			k.Status.LastAppliedRevision = p
			k.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.ReconciliationSucceededReason,
				Message: "Applied revision: " + p, ObservedGeneration: k.Generation, LastTransitionTime: metav1.Now()}}
			return env.Client.Status().Update(context.Background(), k)
		}, want: revB},
		{name: "the project's Kustomization changes the pin while it applies", project: func(t *testing.T, s *projectScene) {
			p := s.objs.ProjectSource.Spec.Reference.Digest
			fleettest.SetSource(t, env.Client, s.objs.ProjectSource, p, true, fleettest.Stored(p))
			fleettest.SetKustomization(t, env.Client, s.objs.Project, web1, p,
				fleettest.Condition(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "Reconciliation in progress"))
		}, later: func(s *projectScene) error {
			o, _ := s.web()
			o = o.DeepCopy()
			o.Spec.Reference.Digest = web2
			if err := env.Client.Update(context.Background(), o); err != nil {
				return err
			}
			k := s.objs.Project.DeepCopy()
			p := s.objs.ProjectSource.Spec.Reference.Digest
			k.Status.LastAppliedRevision = p
			k.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.ReconciliationSucceededReason,
				Message: "Applied revision: " + p, ObservedGeneration: k.Generation, LastTransitionTime: metav1.Now()}}
			return env.Client.Status().Update(context.Background(), k)
		}, wantErr: "to " + web2 + " while the fleet revision that pins it was read"},
		{name: "the project's Kustomization has not applied the pin", project: func(t *testing.T, s *projectScene) {
			fleettest.SetSource(t, env.Client, s.objs.ProjectSource, web1, true, fleettest.Stored(web1))
			fleettest.SetKustomization(t, env.Client, s.objs.Project, web1, web1, fleettest.Applied(web1))
		}, wantErr: "is still applying sha256:"},
		{name: "the project's Kustomization failed the pin", project: func(t *testing.T, s *projectScene) {
			p := s.objs.ProjectSource.Spec.Reference.Digest
			fleettest.SetSource(t, env.Client, s.objs.ProjectSource, p, true, fleettest.Stored(p))
			fleettest.SetKustomization(t, env.Client, s.objs.Project, web1, p,
				fleettest.Condition(meta.ReadyCondition, metav1.ConditionFalse, meta.BuildFailedReason, "kustomize build failed"))
		}, wantErr: errNoFleetRevision.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			project, fluxNS := env.Namespace(t), env.Namespace(t)
			s := newProjectScene(t, project, fluxNS, projectFleet(t, project, "registry.example.test/web:1"))
			setApplied(t, s.root, revB)
			tc.project(t, s)
			e := clusterEnv(t, fluxNS, nil, "127.0.0.1:1", func(c *Config) { c.RecheckInterval = -1 })
			done := make(chan error, 1)
			if tc.later != nil {
				go func() {
					time.Sleep(3 * settlePoll)
					done <- tc.later(s)
				}()
			} else {
				done <- nil
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*settlePoll)
			defer cancel()
			o, _ := s.web()
			got, err := e.srv.fleetRevisionOf(ctx, kustomizev1.KustomizationKind, fluxNS, o.Name, layout.AppRef{Project: project, Name: "api"}, "", o.Spec.Reference.Digest)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("fleetRevisionOf = %q, %v; want an error containing %q", got, err, tc.wantErr)
			case tc.wantErr == "" && (err != nil || got != tc.want):
				t.Errorf("fleetRevisionOf = %q, %v; want %s", got, err, tc.want)
			case tc.wantErr == errNoFleetRevision.Error() && !errors.Is(err, errNoFleetRevision):
				t.Errorf("fleetRevisionOf error %v, want errNoFleetRevision", err)
			}
		})
	}
}

// TestProjectEventOf checks which events are of a project's own Flux
// objects: project-<p>'s Kustomization or OCIRepository, annotated with
// the project alone.
func TestProjectEventOf(t *testing.T) {
	t.Parallel()
	ev := func(kind, name string, meta map[string]string) *eventv1.Event {
		return &eventv1.Event{InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}, Metadata: meta}
	}
	tests := []struct {
		ev   *eventv1.Event
		want string
	}{
		{ev(kustomizev1.KustomizationKind, "project-shop", map[string]string{metaPrefix + "project": "shop"}), "shop"},
		{ev(sourcev1.OCIRepositoryKind, "project-shop", map[string]string{"project": "shop"}), "shop"},
		// An app's component, and objects of no project.
		{ev(kustomizev1.KustomizationKind, "project-shop", map[string]string{metaPrefix + "project": "shop", metaPrefix + "app": "api"}), ""},
		{ev(kustomizev1.KustomizationKind, "shop-api-web", map[string]string{metaPrefix + "project": "shop"}), ""},
		{ev(kustomizev1.KustomizationKind, "project-cart", map[string]string{metaPrefix + "project": "shop"}), ""},
		{ev(kustomizev1.KustomizationKind, "flux-system", nil), ""},
		{ev("HelmRelease", "project-shop", map[string]string{metaPrefix + "project": "shop"}), ""},
	}
	for _, tc := range tests {
		if got := projectEventOf(tc.ev); got != tc.want {
			t.Errorf("projectEventOf(%s/%s %v) = %q, want %q", tc.ev.InvolvedObject.Kind, tc.ev.InvolvedObject.Name, tc.ev.Metadata, got, tc.want)
		}
	}
}
