package probe

import (
	"maps"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe/fleettest"
)

// projectSpecs is a platform with fleet.artifacts and one app, shop/api,
// of one component, web.
var projectSpecs = map[string][]byte{
	"platform.yaml":          []byte("apps_domain: apps.test\nclusters: [{name: prod}]\nbuild: {pin: false}\nfleet:\n  artifacts: {repository: registry.example.test/fleet}\n"),
	"apps/shop/api/app.yaml": []byte("name: api\ncomponents:\n  - {name: web, type: workload, workload_spec: {image: registry.example.test/web:1, port: 8080}}\n"),
}

// scene is shop/api in the test cluster as render wrote it with a source
// per project, applied by the root Kustomization fleet.
type scene struct {
	c       client.Client
	ns      string
	root    *kustomizev1.Kustomization
	objs    fleettest.Objects
	project string // the project's artifact revision the fleet pins
	web     string // web's artifact revision the fleet pins
}

func newScene(t *testing.T, f *fleettest.Fleet) *scene {
	t.Helper()
	s := &scene{c: env.Client, ns: env.Namespace(t)}
	s.root = rootKustomization(t, s.c, s.ns, "fleet")
	s.objs = f.App(t, "prod", "shop", "api")
	s.objs.Create(t, s.c, s.ns, s.root.Name)
	if s.objs.InProject {
		s.project = s.objs.ProjectSource.Spec.Reference.Digest
	}
	s.web = s.objs.Sources["shop-api-web"].Spec.Reference.Digest
	return s
}

// synced leaves everything as Flux does once it rolled rev out.
func (s *scene) synced(t *testing.T, rev string) {
	t.Helper()
	setKustomizationStatus(t, s.c, s.root, rev, rev, fleettest.Applied(rev))
	if s.objs.InProject {
		fleettest.Synced(t, s.c, s.objs.ProjectSource, s.objs.Project)
	}
	fleettest.Synced(t, s.c, s.objs.Sources["shop-api-web"], s.objs.Kustomizations["shop-api-web"])
}

func (s *scene) sync(t *testing.T, artifacts map[string]string) Check {
	t.Helper()
	p := &Prober{Client: s.c}
	chk, _ := p.Sync(t.Context(), Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: s.ns, Artifacts: artifacts})
	if len(chk.Components) != 1 {
		t.Fatalf("components = %+v", chk.Components)
	}
	return chk
}

// TestSyncProjectSource walks the links of a component applied from its
// project's artifact: the root applied the fleet revision, source-controller
// pulled the project's artifact it pins, the project's Kustomization
// applied it, source-controller pulled the component's artifact, and the
// component's Kustomization applied it. Each link that is behind holds the
// check back with its own message, and one that fails fails it.
func TestSyncProjectSource(t *testing.T) {
	t.Parallel()
	f := fleettest.Render(t, projectSpecs, nil, "")
	const revNext = "main@sha1:4444444444444444444444444444444444444444"
	notReady := func(reason, msg string) metav1.Condition {
		return fleettest.Condition(meta.ReadyCondition, metav1.ConditionFalse, reason, msg)
	}
	progressing := fleettest.Condition(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "Reconciliation in progress")
	pullFailed := "failed to pull artifact from 'oci://registry.example.test/fleet': MANIFEST_UNKNOWN: manifest unknown"
	dryRun := "Kustomization/%s/shop-api-web dry-run failed: spec.timeout: Invalid value"
	tests := []struct {
		name      string
		setup     func(t *testing.T, s *scene)
		artifacts map[string]string
		state     State
		msgPart   string // %s: the Flux namespace; {project}, {web}: the pins
		// linked: the component's artifact and the project's are known
		// to be the revision's.
		linked bool
	}{
		{
			name: "applied", state: StatePassed, msgPart: "1 Kustomizations ready", linked: true,
		},
		{
			name: "the root has not applied the revision",
			setup: func(t *testing.T, s *scene) {
				setKustomizationStatus(t, s.c, s.root, revNext, revNext, fleettest.Applied(revNext))
			},
			state:   StateProgressing,
			msgPart: "waiting for Kustomization %s/fleet, which applies Kustomization %s/project-shop, to apply " + rev + " (it applied " + revNext + ")",
		},
		{
			name: "the root is applying the next revision",
			setup: func(t *testing.T, s *scene) {
				setKustomizationStatus(t, s.c, s.root, rev, revNext, progressing)
			},
			state:   StateProgressing,
			msgPart: "waiting for Kustomization %s/fleet, which applies Kustomization %s/project-shop, to finish applying " + revNext,
		},
		{
			name: "source-controller has not pulled the project's artifact",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetSource(t, s.c, s.objs.ProjectSource, digestOld, true, progressing)
			},
			state:   StateProgressing,
			msgPart: "waiting for source-controller to pull {project} for OCIRepository %s/project-shop (Progressing: Reconciliation in progress)",
		},
		{
			name: "the project's artifact cannot be pulled",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetSource(t, s.c, s.objs.ProjectSource, digestOld, false, notReady(sourcev1.OCIPullFailedReason, pullFailed))
			},
			state:   StateProgressing,
			msgPart: "source-controller cannot pull {project} for OCIRepository %s/project-shop: OCIArtifactPullFailed: " + pullFailed,
		},
		{
			name: "the project's OCIRepository is stalled",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetSource(t, s.c, s.objs.ProjectSource, "", true, notReady(sourcev1.URLInvalidReason, "URL must be in format 'oci://<domain>/<org>/<repo>'"),
					fleettest.Condition(meta.StalledCondition, metav1.ConditionTrue, sourcev1.URLInvalidReason, "URL must be in format 'oci://<domain>/<org>/<repo>'"))
			},
			state:   StateFailed,
			msgPart: "OCIRepository %s/project-shop stalled: URLInvalid",
		},
		{
			name: "the project's Kustomization has not applied the project's artifact",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetKustomization(t, s.c, s.objs.Project, digestOld, digestOld, fleettest.Applied(digestOld))
			},
			state:   StateProgressing,
			msgPart: "waiting for Kustomization %s/project-shop, which applies it, to apply {project} from OCIRepository %s/project-shop (it applied " + digestOld + ")",
		},
		{
			name: "the project's Kustomization is applying it",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetKustomization(t, s.c, s.objs.Project, digestOld, s.project, progressing)
			},
			state:   StateProgressing,
			msgPart: "waiting for Kustomization %s/project-shop, which applies it, to finish applying {project}",
		},
		{
			name: "the project's Kustomization cannot apply it",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetKustomization(t, s.c, s.objs.Project, digestOld, s.project,
					notReady(meta.ReconciliationFailedReason, strings.ReplaceAll(dryRun, "%s", s.ns)))
			},
			state:   StateProgressing,
			msgPart: "Kustomization %s/project-shop, which applies it, cannot apply {project}: ReconciliationFailed: " + dryRun,
		},
		{
			name: "the project's artifact does not build",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetKustomization(t, s.c, s.objs.Project, digestOld, s.project,
					notReady(meta.BuildFailedReason, "kustomize build failed: accumulating resources from 'api.yaml'"))
			},
			state:   StateFailed,
			msgPart: "Kustomization %s/project-shop, which applies it, failed to apply {project}: BuildFailed: kustomize build failed",
		},
		{
			name: "the project's Kustomization is stalled",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetKustomization(t, s.c, s.objs.Project, digestOld, s.project, notReady("InvalidPath", "path not found"),
					fleettest.Condition(meta.StalledCondition, metav1.ConditionTrue, "InvalidPath", "path not found"))
			},
			state:   StateFailed,
			msgPart: "Kustomization %s/project-shop, which applies it, failed to apply {project}: stalled: path not found",
		},
		{
			name: "the project's Kustomization is being deleted",
			setup: func(t *testing.T, s *scene) {
				k := s.objs.Project
				if err := s.c.Get(t.Context(), client.ObjectKeyFromObject(k), k); err != nil {
					t.Fatal(err)
				}
				k.Finalizers = []string{kustomizev1.KustomizationFinalizer}
				if err := s.c.Update(t.Context(), k); err != nil {
					t.Fatal(err)
				}
				if err := s.c.Delete(t.Context(), k); err != nil {
					t.Fatal(err)
				}
			},
			state:   StateProgressing,
			msgPart: "Kustomization %s/project-shop, which applies it, is being deleted",
		},
		{
			// The project's objects are in place: a later failure to pull
			// the project's artifact again does not hold the app back.
			name: "the project's artifact cannot be pulled again after it was applied",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetSource(t, s.c, s.objs.ProjectSource, s.project, true, notReady(sourcev1.AuthenticationFailedReason, "failed to get credential"))
			},
			state: StatePassed, msgPart: "1 Kustomizations ready", linked: true,
		},
		{
			name: "source-controller has not pulled the component's artifact",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetSource(t, s.c, s.objs.Sources["shop-api-web"], digestOld, true, progressing)
			},
			state:   StateProgressing,
			msgPart: "waiting for source-controller to pull {web} for OCIRepository %s/shop-api-web", linked: true,
		},
		{
			name: "the component's Kustomization failed its health check",
			setup: func(t *testing.T, s *scene) {
				fleettest.SetKustomization(t, s.c, s.objs.Kustomizations["shop-api-web"], digestOld, s.web,
					notReady(meta.HealthCheckFailedReason, "health check failed after 5m0s"))
			},
			state:   StateFailed,
			msgPart: "HealthCheckFailed: health check failed after 5m0s", linked: true,
		},
		{
			name: "source-controller names the artifacts by tag and digest",
			setup: func(t *testing.T, s *scene) {
				tagged := "latest@" + s.project
				fleettest.SetSource(t, s.c, s.objs.ProjectSource, tagged, true, fleettest.Stored(tagged))
				fleettest.SetKustomization(t, s.c, s.objs.Project, tagged, tagged, fleettest.Applied(tagged))
			},
			state: StatePassed, msgPart: "1 Kustomizations ready", linked: true,
		},
		{
			// Another app of the project changed: the root and the
			// project's Kustomization moved on, and this app's objects are
			// as the revision left them.
			name: "the project moved on and left the app as it was",
			setup: func(t *testing.T, s *scene) {
				setKustomizationStatus(t, s.c, s.root, revNext, revNext, fleettest.Applied(revNext))
				fleettest.SetKustomization(t, s.c, s.objs.Project, digestOld, digestNew,
					notReady(meta.BuildFailedReason, "kustomize build failed"))
			},
			artifacts: map[string]string{"shop-api-web": "{web}"},
			state:     StatePassed, msgPart: "1 Kustomizations ready",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newScene(t, f)
			if !s.objs.InProject {
				t.Fatal("the app's Flux objects are not in its project's Flux folder")
			}
			s.synced(t, rev)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			fill := strings.NewReplacer("%s", s.ns, "{project}", s.project, "{web}", s.web)
			artifacts := maps.Clone(tc.artifacts)
			for k, v := range artifacts {
				artifacts[k] = fill.Replace(v)
			}
			chk := s.sync(t, artifacts)
			if msgPart := fill.Replace(tc.msgPart); chk.State != tc.state || !strings.Contains(chk.Message, msgPart) {
				t.Errorf("sync = %s %q, want %s containing %q", chk.State, chk.Message, tc.state, msgPart)
			}
			cs := chk.Components[0]
			want := ComponentStatus{Source: "OCIRepository/shop-api-web", ProjectSource: "OCIRepository/project-shop"}
			if tc.linked {
				want.Artifact, want.ProjectArtifact = s.web, s.project
			}
			if tc.artifacts != nil {
				want.Artifact = s.web
			}
			if cs.Source != want.Source || cs.ProjectSource != want.ProjectSource || cs.ProjectArtifact != want.ProjectArtifact ||
				(tc.state == StatePassed && cs.Artifact != want.Artifact) {
				t.Errorf("component = %+v, want sources %s, %s at %q, %q", cs, want.Source, want.ProjectSource, want.Artifact, want.ProjectArtifact)
			}
		})
	}
}

// TestSyncWhileMovingToProjectSources follows an app through the two
// renders that move its Flux objects from the cluster folder to its
// project's Flux folder: first the root applies them (marked not to be
// pruned), then the project's Kustomization takes them over. The check
// reads whichever Kustomization applied them.
func TestSyncWhileMovingToProjectSources(t *testing.T) {
	t.Parallel()
	gitLayout := maps.Clone(projectSpecs)
	gitLayout["platform.yaml"] = []byte("apps_domain: apps.test\nclusters: [{name: prod}]\nbuild: {pin: false}\n")
	before := fleettest.Render(t, gitLayout, nil, "")
	step1 := fleettest.Render(t, projectSpecs, before.Files, "")
	step2 := fleettest.Render(t, projectSpecs, step1.Files, "")

	// Step one: the app's file stays in the cluster folder.
	s := newScene(t, step1)
	if s.objs.InProject {
		t.Fatal("the first render moved the app's Flux objects at once")
	}
	if got := s.objs.Kustomizations["shop-api-web"].Annotations["kustomize.toolkit.fluxcd.io/prune"]; got != "disabled" {
		t.Errorf("the first render's Kustomization has prune annotation %q, want disabled", got)
	}
	s.synced(t, rev)
	if chk := s.sync(t, nil); chk.State != StatePassed || chk.Components[0].ProjectSource != "" || chk.Components[0].Artifact != s.web {
		t.Errorf("step one: sync = %s %q %+v, want passed, applied by the root", chk.State, chk.Message, chk.Components[0])
	}

	// Step two, before the project's Kustomization applied its artifact:
	// the root applied the move, and the app's objects are still labelled
	// as the root's.
	moved := step2.App(t, "prod", "shop", "api")
	if !moved.InProject {
		t.Fatal("the second render left the app's Flux objects in the cluster folder")
	}
	const rev2 = "main@sha1:5555555555555555555555555555555555555555"
	for _, o := range []client.Object{moved.ProjectSource, moved.Project} {
		o.SetNamespace(s.ns)
		o.SetLabels(map[string]string{layout.AppliedByNameLabel: s.root.Name, layout.AppliedByNamespaceLabel: s.ns})
		if err := s.c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	setKustomizationStatus(t, s.c, s.root, rev2, rev2, fleettest.Applied(rev2))
	p := &Prober{Client: s.c}
	target := Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev2, FluxNamespace: s.ns}
	if chk, _ := p.Sync(t.Context(), target); chk.State != StatePassed {
		t.Errorf("step two, objects still the root's: sync = %s %q, want passed", chk.State, chk.Message)
	}

	// The project's Kustomization applied them: kustomize-controller's
	// owner labels now name it, the prune annotation is gone, and the
	// check waits for it.
	for _, o := range []client.Object{s.objs.Sources["shop-api-web"], s.objs.Kustomizations["shop-api-web"]} {
		if err := s.c.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		l, a := o.GetLabels(), o.GetAnnotations()
		l[layout.AppliedByNameLabel] = moved.Project.Name
		delete(a, "kustomize.toolkit.fluxcd.io/prune")
		o.SetLabels(l)
		o.SetAnnotations(a)
		if err := s.c.Update(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	fleettest.Synced(t, s.c, s.objs.Sources["shop-api-web"], s.objs.Kustomizations["shop-api-web"])
	fleettest.SetSource(t, s.c, moved.ProjectSource, "", true, fleettest.Condition(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "reconciliation in progress"))
	chk, _ := p.Sync(t.Context(), target)
	if want := "waiting for source-controller to pull " + moved.ProjectSource.Spec.Reference.Digest + " for OCIRepository " + s.ns + "/project-shop"; chk.State != StateProgressing || !strings.Contains(chk.Message, want) {
		t.Errorf("step two, project not pulled: sync = %s %q, want progressing containing %q", chk.State, chk.Message, want)
	}
	fleettest.Synced(t, s.c, moved.ProjectSource, moved.Project)
	chk, _ = p.Sync(t.Context(), target)
	if cs := chk.Components[0]; chk.State != StatePassed || cs.ProjectSource != "OCIRepository/project-shop" || cs.ProjectArtifact != moved.ProjectSource.Spec.Reference.Digest {
		t.Errorf("step two, applied by the project: sync = %s %q %+v, want passed through project-shop", chk.State, chk.Message, cs)
	}
}

// BenchmarkSyncProjectSource measures one sync check of shop/api through
// its project's source against the test API server, next to the same app
// with its Flux objects applied by the root (the layout before a source
// per project): the project's link costs two more reads.
func BenchmarkSyncProjectSource(b *testing.B) {
	for _, tc := range []struct {
		name  string
		specs map[string][]byte
		prev  bool
	}{
		{"project source", projectSpecs, false},
		{"applied by the root", projectSpecs, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var f *fleettest.Fleet
			if tc.prev {
				gitLayout := maps.Clone(tc.specs)
				gitLayout["platform.yaml"] = []byte("apps_domain: apps.test\nclusters: [{name: prod}]\nbuild: {pin: false}\n")
				f = fleettest.Render(b, tc.specs, fleettest.Render(b, gitLayout, nil, "").Files, "")
			} else {
				f = fleettest.Render(b, tc.specs, nil, "")
			}
			ns := env.Namespace(b)
			c := env.Client
			root := &kustomizev1.Kustomization{
				ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
				Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Hour}, Path: "./clusters/prod", Prune: true,
					SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet", Namespace: ns}},
			}
			if err := c.Create(b.Context(), root); err != nil {
				b.Fatal(err)
			}
			objs := f.App(b, "prod", "shop", "api")
			objs.Create(b, c, ns, root.Name)
			fleettest.SetKustomization(b, c, root, rev, rev, fleettest.Applied(rev))
			if objs.InProject {
				fleettest.Synced(b, c, objs.ProjectSource, objs.Project)
			}
			fleettest.Synced(b, c, objs.Sources["shop-api-web"], objs.Kustomizations["shop-api-web"])
			p := &Prober{Client: c}
			target := Target{App: layout.AppRef{Project: "shop", Name: "api"}, Revision: rev, FluxNamespace: ns}
			for b.Loop() {
				if chk, _ := p.Sync(b.Context(), target); chk.State != StatePassed {
					b.Fatalf("sync = %s %q", chk.State, chk.Message)
				}
			}
		})
	}
}
