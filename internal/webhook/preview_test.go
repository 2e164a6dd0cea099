package webhook

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// asPreview puts the event's object in pull request pr's preview of shop
// (namespace shop-pr<N>) with its environment, as render writes a
// preview's Flux objects.
func asPreview(ns, env string) func(*eventv1.Event) {
	return func(ev *eventv1.Event) {
		ev.InvolvedObject.Namespace = ns
		inEnvironment(env)(ev)
	}
}

// TestPreviewAttribution checks which namespaces may speak for a
// project's preview: pull request N's preview namespace <project>-prN,
// for environment pr-N only, and no namespace that merely looks like one.
func TestPreviewAttribution(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: Config{FluxNamespace: "flux-system"}}
	obj := func(kind, ns, name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name}
	}
	tests := []struct {
		obj                          *corev1.ObjectReference
		project, app, component, env string
		want                         string // part of the reason; "" when it may
	}{
		// The preview's own objects, for the preview.
		{obj("HelmRelease", "shop-pr12", "api-db"), "shop", "api", "db", "pr-12", ""},
		{obj("Kustomization", "shop-pr12", "shop-api-web"), "shop", "api", "web", "pr-12", ""},
		{obj("Kustomization", "shop-pr1", "shop-api-web"), "shop", "api", "", "pr-1", ""},
		// The project's own Flux objects there (no app, no environment).
		{obj("Kustomization", "shop-pr12", "project-shop"), "shop", "", "", "", ""},
		// The preview's objects for another environment of the project.
		{obj("HelmRelease", "shop-pr12", "api-db"), "shop", "api", "db", "production", "speaks only for environment pr-12"},
		{obj("HelmRelease", "shop-pr12", "api-db"), "shop", "api", "db", "", "speaks only for environment pr-12"},
		{obj("HelmRelease", "shop-pr12", "api-db"), "shop", "api", "db", "pr-13", "speaks only for environment pr-12"},
		{obj("Kustomization", "shop-pr12", "shop-api-web"), "shop", "api", "web", "pr-120", "speaks only for environment pr-12"},
		// A preview's environment from the project's namespace or the Flux
		// namespace: the preview's objects live in its own.
		{obj("HelmRelease", "shop", "api-db"), "shop", "api", "db", "pr-12", "lives in namespace shop-pr12"},
		{obj("Kustomization", "flux-system", "shop-api-web"), "shop", "api", "web", "pr-12", "lives in namespace shop-pr12"},
		// Namespaces that look like the project's previews and are not.
		{obj("HelmRelease", "other-pr1", "api-db"), "shop", "api", "db", "pr-1", "in environment pr-1, which lives in namespace shop-pr1 only"},
		{obj("HelmRelease", "shopx-pr1", "api-db"), "shop", "api", "db", "pr-1", "which lives in namespace shop-pr1 only"},
		{obj("HelmRelease", "shop-pr01", "api-db"), "shop", "api", "db", "pr-1", "which lives in namespace shop-pr1 only"},
		{obj("HelmRelease", "shop-pr+1", "api-db"), "shop", "api", "db", "pr-1", "which lives in namespace shop-pr1 only"},
		{obj("HelmRelease", "shop-pr0", "api-db"), "shop", "api", "db", "pr-0", "neither"},
		{obj("HelmRelease", "shop-pr", "api-db"), "shop", "api", "db", "pr-1", "which lives in namespace shop-pr1 only"},
		{obj("HelmRelease", "shop-pr1x", "api-db"), "shop", "api", "db", "pr-1", "which lives in namespace shop-pr1 only"},
		{obj("HelmRelease", "shop-pr-1", "api-db"), "shop", "api", "db", "pr-1", "which lives in namespace shop-pr1 only"},
		{obj("HelmRelease", "shop-pr1-pr2", "api-db"), "shop", "api", "db", "pr-2", "which lives in namespace shop-pr2 only"},
		{obj("HelmRelease", "shop-pr12345678901", "api-db"), "shop", "api", "db", "pr-12345678901", "neither"},
		{obj("HelmRelease", "shopx-pr1", "api-db"), "shop", "api", "db", "", "neither in the project's namespace shop"},
		{obj("HelmRelease", "shop-pr01", "api-db"), "shop", "api", "db", "", "neither"},
		{obj("HelmRelease", "shop-pr0", "api-db"), "shop", "api", "db", "", "neither"},
		{obj("HelmRelease", "other-pr1", "api-db"), "shop", "api", "db", "production", "neither"},
		{obj("Kustomization", "shopx-pr1", "project-shop"), "shop", "", "", "", "names project shop but"},
		// Another project's preview speaks for that project only.
		{obj("HelmRelease", "cart-pr12", "api-db"), "shop", "api", "db", "pr-12", "which lives in namespace shop-pr12 only"},
	}
	for _, tc := range tests {
		got := s.attribution(tc.obj, layout.AppRef{Project: tc.project, Name: tc.app}, tc.component, tc.env)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("attribution(%s %s/%s, %s/%s/%s in %q) = %q, want it to count", tc.obj.Kind, tc.obj.Namespace, tc.obj.Name, tc.project, tc.app, tc.component, tc.env, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("attribution(%s %s/%s, %s/%s/%s in %q) = %q, want %q", tc.obj.Kind, tc.obj.Namespace, tc.obj.Name, tc.project, tc.app, tc.component, tc.env, got, tc.want)
		}
	}
}

// TestForgedPreviewEventsChangeNothing sends, as the author of a pull
// request whose preview runs in shop-pr12 would (its specs write that
// namespace's objects, annotated as they like), and as a team whose
// namespace only looks like a preview of shop, signed events claiming
// shop/api in production, in no environment, and in another pull
// request's preview. Production keeps running its revision with its
// components untouched and no phase change; the other preview gets no
// history; each event is stored as ignored with the reason.
func TestForgedPreviewEventsChangeNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, func(c *Config) {
		c.Prober = fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"}
	})
	e.mustPost(fixture(t, "helmrelease-installsucceeded", inEnvironment("production")), 200)
	before := e.waitEnvPhase("production", "13.4.4", store.PhaseRunning)
	d0, err := e.st.Deployment(t.Context(), before.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	// The preview's own event counts, for the preview.
	own := e.mustPost(fixture(t, "helmrelease-installsucceeded", asPreview("shop-pr12", "pr-12")), 200)
	if own.Status != "applied" || own.Environment != "pr-12" || own.Project != "shop" || own.App != "api" {
		t.Fatalf("the preview's own event: %+v", own)
	}
	e.waitEnvPhase("pr-12", "13.4.4", store.PhaseRunning)

	attacks := []struct {
		name   string
		body   []byte
		reason string
	}{
		{"the preview's HelmRelease claiming production", fixture(t, "helmrelease-upgradefailed", asPreview("shop-pr12", "production")),
			"HelmRelease shop-pr12/api-db lives in namespace shop-pr12, pull request 12's preview of shop: it speaks only for environment pr-12, not \"production\""},
		{"the preview's HelmRelease claiming no environment", fixture(t, "helmrelease-upgradefailed", inNamespace("shop-pr12")),
			"it speaks only for environment pr-12, not \"\""},
		{"the preview's HelmRelease claiming another pull request's preview", fixture(t, "helmrelease-upgradefailed", asPreview("shop-pr12", "pr-13")),
			"it speaks only for environment pr-12, not \"pr-13\""},
		{"the preview's Kustomization claiming production", fixture(t, "kustomization-healthcheckfailed", asPreview("shop-pr12", "production")),
			"Kustomization shop-pr12/shop-api-web lives in namespace shop-pr12"},
		{"another team's namespace named like a preview of shop", fixture(t, "helmrelease-upgradefailed", asPreview("shopx-pr1", "pr-1")),
			"HelmRelease shopx-pr1/api-db names app shop/api in environment pr-1, which lives in namespace shop-pr1 only"},
		{"another team's namespace named like a preview of shop, for production", fixture(t, "helmrelease-upgradefailed", asPreview("shopx-pr1", "production")),
			"HelmRelease shopx-pr1/api-db names app shop/api but is neither in the project's namespace shop"},
		{"another project's preview", fixture(t, "helmrelease-upgradefailed", asPreview("other-pr1", "pr-1")),
			"HelmRelease other-pr1/api-db names app shop/api in environment pr-1, which lives in namespace shop-pr1 only"},
		{"a preview number with a leading zero", fixture(t, "helmrelease-upgradefailed", asPreview("shop-pr012", "pr-12")),
			"HelmRelease shop-pr012/api-db names app shop/api in environment pr-12, which lives in namespace shop-pr12 only"},
		{"a preview's environment from the project's namespace", fixture(t, "helmrelease-upgradefailed", inEnvironment("pr-12")),
			"HelmRelease shop/api-db names app shop/api in environment pr-12, which lives in namespace shop-pr12 only"},
		{"a preview's environment from the Flux namespace", fixture(t, "kustomization-healthcheckfailed", inEnvironment("pr-12")),
			"Kustomization flux-system/shop-api-web names app shop/api in environment pr-12, which lives in namespace shop-pr12 only"},
	}
	for _, a := range attacks {
		code, r := e.post(a.body)
		if code != 202 || r.Status != "ignored" || r.Project != "" || r.App != "" || r.DeploymentID != 0 || !strings.Contains(r.Reason, a.reason) {
			t.Errorf("%s: POST = %d %+v, want 202 ignored for %q", a.name, code, r, a.reason)
		}
	}
	waitTrackerIdle(t, e)

	after, err := e.st.App(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, "production")
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("production changed:\n%+v\nwas\n%+v", after, before)
	}
	d, err := e.st.Deployment(t.Context(), before.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d0.Components, d.Components); diff != "" {
		t.Errorf("production's components (-before +after):\n%s", diff)
	}
	apps, err := e.st.Apps(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var envs []string
	for _, a := range apps {
		envs = append(envs, a.Environment+" "+string(a.Phase))
	}
	if diff := cmp.Diff([]string{"pr-12 running", "production running"}, envs); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	ign, err := e.st.Events(t.Context(), layout.AppRef{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ign) != len(attacks) {
		t.Errorf("ignored events = %d, want %d", len(ign), len(attacks))
	}
}

// previewClusterApp writes to the test cluster the objects of app web of
// project in namespace ns, as render writes an environment's: its
// Kustomization (there too, labelled with the environment), Deployment
// and Ingress for host. The Kustomization has applied rev1.
func previewClusterApp(t *testing.T, project, ns, environment, host string) (*kustomizev1.Kustomization, *appsv1.Deployment) {
	t.Helper()
	labels := map[string]string{layout.LabelApp: "web", layout.LabelProject: project, layout.LabelComponent: "web"}
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: project + "-web-web", Namespace: ns,
			Labels: map[string]string{layout.LabelApp: "web", layout.LabelProject: project, layout.LabelComponent: "web", layout.LabelEnvironment: environment},
			Annotations: map[string]string{layout.EventAnnotationPrefix + layout.EventApp: "web", layout.EventAnnotationPrefix + layout.EventProject: project,
				layout.EventAnnotationPrefix + layout.EventComponent: "web", layout.EventAnnotationPrefix + layout.EventEnvironment: environment,
				layout.EventAnnotationPrefix + layout.EventSpecRevision: fixtureSpec}},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Timeout: &metav1.Duration{Duration: 5 * time.Minute},
			Path: "./apps/stage-eu/" + project + "/web/web", Prune: true, Wait: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"},
		},
	}
	sel := map[string]string{"app.kubernetes.io/instance": "web-web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web-web", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.test/web:v1"}}}}},
	}
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web-web", Namespace: ns,
			Labels: map[string]string{layout.LabelApp: "web", layout.LabelProject: project, layout.LabelComponent: "web", layout.LabelManagedBy: layout.ManagedBy}},
		Spec: networkingv1.IngressSpec{
			TLS: []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: "web-web-tls"}},
			Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "web-web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
		},
	}
	for _, o := range []client.Object{k, d, ing} {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	setApplied(t, k, rev1)
	return k, d
}

// setAvailable writes a Deployment's status with available of its one
// replica available.
func setAvailable(t *testing.T, d *appsv1.Deployment, available int32) {
	t.Helper()
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1,
		ReadyReplicas: available, AvailableReplicas: available}
	if err := env.Client.Status().Update(t.Context(), d); err != nil {
		t.Fatal(err)
	}
}

// previewNamespace creates pull request pr's preview namespace of project
// in the test cluster.
func previewNamespace(t *testing.T, project string, pr int) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: layout.PreviewNamespace(project, pr)}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// TestClusterPreviewChecksItsNamespace: on a cluster that runs staging
// and pull request 12's preview of the same app, the preview's checks
// read the preview's namespace only. Staging's Kustomization (in the
// project's namespace and, as a fleet rendered before projects held
// them, one in the Flux namespace) and its ready Deployment do not make
// the preview ready; the preview's own Deployment does, and its live URL
// is the preview's host.
func TestClusterPreviewChecksItsNamespace(t *testing.T) {
	t.Parallel()
	project, fluxNS := env.Namespace(t), env.Namespace(t)
	ns := previewNamespace(t, project, 12)
	const stagingHost, previewHost = "web.shop.example.test", "web-shop-pr12.preview.example.test"
	stagingK, stagingDep := previewClusterApp(t, project, project, "staging", stagingHost)
	setAvailable(t, stagingDep, 1)
	legacy := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: stagingK.Name, Namespace: fluxNS,
		Labels: map[string]string{layout.LabelApp: "web", layout.LabelProject: project, layout.LabelComponent: "web"}}, Spec: stagingK.Spec}
	if err := env.Client.Create(t.Context(), legacy); err != nil {
		t.Fatal(err)
	}
	setApplied(t, legacy, rev1)
	_, previewDep := previewClusterApp(t, project, ns, "pr-12", previewHost)
	setAvailable(t, previewDep, 0)
	pool, addr := tlsSite(t, previewHost)
	e := clusterEnv(t, fluxNS, pool, addr, func(c *Config) {
		c.Pages.ClusterName, c.Pages.PreviewCluster = "stage-eu", "stage-eu"
		c.Pages.EnvironmentClusters = map[string]string{"staging": "stage-eu", "production": "prod-eu"}
	})

	e.mustPost(fixture(t, "kustomization-succeeded", withApp(project, "web"), asPreview(ns, "pr-12")), 200)
	a := e.waitEnvApp(project, "web", "pr-12", func(a store.App) bool {
		d, err := e.st.Deployment(t.Context(), a.DeploymentID)
		return err == nil && decodeResult(d).Check(probe.CheckReadiness).State == probe.StateProgressing
	})
	if a.Phase != store.PhaseDeploying {
		t.Fatalf("the preview with its Deployment unavailable = %s (%s), want deploying", a.Phase, a.Message)
	}
	d, err := e.st.Deployment(t.Context(), a.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	res := decodeResult(d)
	sync := res.Check(probe.CheckSync)
	if len(sync.Components) != 1 || sync.Components[0].Name != project+"-web-web" {
		t.Errorf("the preview's sync check saw %+v, want its own Kustomization alone", sync.Components)
	}
	if r := res.Check(probe.CheckReadiness); !strings.Contains(r.Message, "0/1 available") {
		t.Errorf("the preview's readiness = %s %q, want its own Deployment's 0/1", r.State, r.Message)
	}

	setAvailable(t, previewDep, 1)
	a = e.waitEnvApp(project, "web", "pr-12", func(a store.App) bool { return a.Phase == store.PhaseRunning })
	if a.Phase != store.PhaseRunning || a.LiveURL != "https://"+previewHost+"/" {
		t.Errorf("the preview = %s at %q (%s), want running at its own host", a.Phase, a.LiveURL, a.Message)
	}

	// The preview's page shows the preview's pods, not staging's.
	for _, p := range []struct{ ns, name string }{{ns, "web-web-preview"}, {project, "web-web-staging"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.ns,
			Labels: map[string]string{layout.LabelApp: "web", layout.LabelProject: project, layout.LabelComponent: "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.test/web:v1"}}}}
		if err := env.Client.Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
	}
	page := get(t, e.srv.Handler(), "/apps/"+project+"/web?environment=pr-12", testToken)
	if body := page.Body.String(); page.Code != 200 || !strings.Contains(body, "web-web-preview") || strings.Contains(body, "web-web-staging") {
		t.Errorf("the preview's page = %d, shows the preview's pod %v, staging's %v", page.Code,
			strings.Contains(body, "web-web-preview"), strings.Contains(body, "web-web-staging"))
	}
}

// waitEnvApp polls the app in env until done accepts it, for 20s at
// most, and returns the app last read.
func (e *testEnv) waitEnvApp(project, app, env string, done func(store.App) bool) store.App {
	e.t.Helper()
	var a store.App
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if a, err = e.st.App(e.t.Context(), layout.AppRef{Project: project, Name: app}, env); err == nil && done(a) {
			return a
		}
	}
	return a
}

// TestPreviewOnAnotherClusterIsNotChecked: a webhook reading cluster
// prod-eu does not check a preview, which runs on previews.cluster
// (stage-eu): prod-eu's objects of its names are production's.
func TestPreviewOnAnotherClusterIsNotChecked(t *testing.T) {
	t.Parallel()
	var ready atomic.Int32
	e := newTestEnv(t, func(c *Config) {
		c.Prober = readyCounter{fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed}, &ready}
		c.Pages.ClusterName, c.Pages.PreviewCluster = "prod-eu", "stage-eu"
		c.Pages.EnvironmentClusters = map[string]string{"staging": "stage-eu", "production": "prod-eu"}
	})
	r := e.mustPost(fixture(t, "kustomization-succeeded", asPreview("shop-pr3", "pr-3")), 200)
	e.waitEnvPhase("pr-3", rev1, store.PhaseRunning)
	if n := ready.Load(); n != 0 {
		t.Errorf("the preview was checked on production's cluster %d time(s)", n)
	}
	d, err := e.st.Deployment(t.Context(), r.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	if c := decodeResult(d).Check(probe.CheckReadiness); c.State != probe.StateSkipped || c.Message != "runs on cluster stage-eu, not this webhook's prod-eu" {
		t.Errorf("the preview's readiness = %s %q", c.State, c.Message)
	}
	_, unread := e.srv.clusterOf("pr-3")
	if got := e.srv.elsewhere(store.App{AppRef: layout.AppRef{Project: "shop", Name: "api"}, Environment: "pr-3"}, unread); !strings.HasPrefix(got, "pr-3 runs on cluster stage-eu;") {
		t.Errorf("the preview's page says %q", got)
	}
}

// withSpecRevision sets the spec revision the event's object is annotated
// with.
func withSpecRevision(spec string) func(*eventv1.Event) {
	return func(ev *eventv1.Event) { ev.Metadata[metaPrefix+layout.EventSpecRevision] = spec }
}

// waitSection waits until the preview section of the review comment on
// pull request pr of repo reads want.
func waitSection(t *testing.T, srv *githubtest.Server, repo string, pr int, want string) {
	t.Helper()
	var body string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, c := range srv.Comments(repo, pr) {
			if strings.Contains(c.Body, reviewMarker) {
				body = c.Body
			}
		}
		if strings.Contains(body, github.Section(previewSectionName, want)) {
			return
		}
	}
	t.Fatalf("the review comment reads\n%s\nwant its preview section to read\n%s", body, want)
}

// TestPreviewGitHub follows pull request 1's preview of shop/api through
// GitHub: each fleet revision of the preview is a transient deployment in
// environment pr-1 on the apps repository, at the pull request's head
// commit (the spec revision), never on the fleet repository; it gets the
// live URL once the HTTPS check passes; a second push's deployment retires
// the first's; the preview's removal turns the last one inactive. The
// review comment's preview section follows each state, keeping the apps
// render listed as skipped, and the rest of the comment stays as render
// wrote it.
func TestPreviewGitHub(t *testing.T) {
	t.Parallel()
	const appsRepo = "acme/apps"
	head1, head2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	rev2 := "main@sha1:" + strings.Repeat("b", 40)
	srv := githubtest.New(t, githubtest.WithToken("gh-token"))
	pr := srv.AddPullRequest(appsRepo, githubtest.PullRequest{Head: "banner", Base: "main", Title: "web: a new banner"})
	env, ns := layout.PreviewEnvironment(pr), layout.PreviewNamespace("shop", pr)
	rest := "\n## fleetwright: 1 app changed\n\n<details>the diff</details>\n"
	const skipped = "\n- skipped shop/docs (environments.preview.enabled: false)"
	srv.AddComment(appsRepo, pr, "fleetwright[bot]", reviewMarker+"\n"+github.Section(previewSectionName, "**Preview:** "+env+", deploying"+skipped)+rest)
	for _, c := range []struct{ spec, rev string }{{head1, rev1}, {head2, rev2}} {
		srv.Expect("POST", "/repos/acme/apps/deployments").JSONBody(map[string]any{
			"ref": c.spec, "task": "deploy", "auto_merge": false, "required_contexts": []any{},
			"environment": env, "description": "shop/api in " + env + " at " + c.rev, "transient_environment": true,
			"payload": map[string]any{"project": "shop", "app": "api", "revision": c.rev, "spec_revision": c.spec, "environment": env},
		})
	}
	srv.Expect("POST", "/repos/acme/apps/deployments/*/statuses").Between(4, 8).Body(func(b map[string]any) error {
		if b["auto_inactive"] != false {
			return fmt.Errorf("status without auto_inactive false: %v", b)
		}
		return nil
	})
	srv.Expect("GET", fmt.Sprintf("/repos/acme/apps/issues/%d/comments", pr)).Between(4, 12)
	srv.Expect("PATCH", "/repos/acme/apps/issues/comments/*").Between(3, 10)
	client := newGitHubClient(t, srv)
	checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StateProgressing, spec: head1}}
	e := newTestEnv(t, func(c *Config) {
		c.Prober = checker
		c.GitHub = &GitHub{Reporter: client, Sections: client, Repo: fleetRepo, AppsRepo: github.Repo{Owner: "acme", Name: "apps"}}
	})
	const live = "https://api-shop-pr1.preview.example.test/"

	// The first push: deploying until the HTTPS check passes, then running
	// at its URL.
	e.mustPost(fixture(t, "kustomization-succeeded", asPreview(ns, env), withSpecRevision(head1)), 200)
	e.waitEnvPhase(env, rev1, store.PhaseDeploying)
	waitSection(t, srv, appsRepo, pr, "**Preview:** "+env+", deploying at `111111111111`\n\n- shop/api: deploying (checks: sync ✓ readiness ✓ https …)"+skipped)
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: live, spec: head1})
	e.mustPost(fixture(t, "kustomization-succeeded", asPreview(ns, env), withSpecRevision(head1), withMessage("Reconciliation finished in 1s")), 200)
	e.waitEnvPhase(env, rev1, store.PhaseRunning)
	waitEnvGitHub(t, e, env, rev1, "success")
	waitSection(t, srv, appsRepo, pr, "**Preview:** "+env+", running at `111111111111` — "+live+"\n\n- shop/api: running — "+live+" (checks: sync ✓ readiness ✓ https ✓)"+skipped)

	// The second push: a new deployment at the new head commit, the
	// first one retired.
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: live, spec: head2})
	e.mustPost(fixture(t, "kustomization-succeeded", asPreview(ns, env), withSpecRevision(head2), withRevision(rev2)), 200)
	e.waitEnvPhase(env, rev2, store.PhaseRunning)
	waitEnvGitHub(t, e, env, rev2, "success")
	waitEnvGitHub(t, e, env, rev1, "inactive")

	// The pull request closes: Flux prunes the preview.
	checker.set(fakeChecker{sync: probe.StateGone, ready: probe.StatePassed, reach: probe.StatePassed, spec: head2})
	e.mustPost(fixture(t, "kustomization-succeeded", asPreview(ns, env), withSpecRevision(head2), withRevision(rev2),
		withMessage("Deployment/"+ns+"/api-web deleted\nIngress/"+ns+"/api-web deleted")), 200)
	e.waitEnvPhase(env, rev2, store.PhaseDeleted)
	waitEnvGitHub(t, e, env, rev2, "inactive")
	waitSection(t, srv, appsRepo, pr, "**Preview:** "+env+", removed: Flux pruned it\n\n- shop/api: removed"+skipped)

	var got []string
	for _, d := range srv.Deployments(appsRepo) {
		var states []string
		for _, s := range d.Statuses {
			if s.State != "in_progress" { // as many as the checks took attempts
				states = append(states, s.State+" "+s.EnvironmentURL)
			}
		}
		got = append(got, fmt.Sprintf("%s %s transient=%v: %s", d.Environment, d.Ref, d.Transient, strings.Join(states, ", ")))
	}
	want := []string{
		env + " " + head1 + " transient=true: success " + live + ", inactive ",
		env + " " + head2 + " transient=true: success " + live + ", inactive ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the apps repository's deployments (-want +got):\n%s", diff)
	}
	if deps := srv.Deployments(fleetRepo.String()); len(deps) != 0 {
		t.Errorf("the fleet repository got %d deployments of the preview", len(deps))
	}
	for _, c := range srv.Comments(appsRepo, pr) {
		if strings.Contains(c.Body, reviewMarker) && !strings.HasSuffix(c.Body, rest) {
			t.Errorf("the review comment lost the rest of what render wrote:\n%s", c.Body)
		}
	}
}

// TestPreviewSectionEscapes checks that what an event or a cluster said
// reaches the pull request as text: a failure message that would close
// the section, link, or start a heading, and a live URL that would link
// elsewhere, are escaped or left out.
func TestPreviewSectionEscapes(t *testing.T) {
	t.Parallel()
	msg := "<!-- /fleetwright:preview -->\n# owned [click](https://evil.example/) <img src=x> `x` ![i](https://evil.example/i.png)"
	if got, want := markdownText(msg), `\<\!-- /fleetwright\:preview --\> \# owned \[click\]\(https\://evil.example/\) \<img src=x\> \`+"`x\\`"+` \!\[i\]\(https\://evil.example/i.png\)`; got != want {
		t.Errorf("markdownText = %q, want %q", got, want)
	}
	for u, want := range map[string]string{
		"https://web-shop-pr12.preview.example.com/":  "https://web-shop-pr12.preview.example.com/",
		"http://web.example.test:8443/app/":           "http://web.example.test:8443/app/",
		"https://x.example/)[y](https://evil.example": "",
		"javascript:alert(1)":                         "",
		"https://user@x.example/":                     "",
		"https://x.example/<b>":                       "",
		"":                                            "",
	} {
		if got := safeURL(u); got != want {
			t.Errorf("safeURL(%q) = %q, want %q", u, got, want)
		}
	}
}

// TestRetireDegradedEarlier: a deployment that ran and was degraded when
// the app's next revision came (Flux reconciling the new revision makes
// the old one's sync check see its Kustomization progressing) is retired
// on GitHub when the new one succeeds, as a running one is; its failure
// status was the rollout's, not its own end.
func TestRetireDegradedEarlier(t *testing.T) {
	t.Parallel()
	rev2 := "main@sha1:" + strings.Repeat("2", 40)
	srv := githubtest.New(t, githubtest.WithToken("gh-token"))
	srv.Expect("POST", "/repos/acme/fleet/deployments").Times(2)
	srv.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Between(4, 8)
	checker := &switchChecker{fakeChecker: fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"}}
	e := newTestEnv(t, func(c *Config) {
		c.Prober = checker
		c.GitHub = &GitHub{Reporter: newGitHubClient(t, srv), Repo: fleetRepo}
	})
	e.mustPost(fixture(t, "kustomization-succeeded", inEnvironment("staging")), 200)
	e.waitEnvPhase("staging", rev1, store.PhaseRunning)
	waitEnvGitHub(t, e, "staging", rev1, "success")
	// Flux starts on rev2: rev1's Kustomization is progressing.
	checker.set(fakeChecker{sync: probe.StateProgressing, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"})
	e.mustPost(fixture(t, "kustomization-progressing", inEnvironment("staging")), 200)
	e.waitEnvPhase("staging", rev1, store.PhaseDegraded)
	waitEnvGitHub(t, e, "staging", rev1, "failure")
	checker.set(fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"})
	e.mustPost(fixture(t, "kustomization-succeeded", inEnvironment("staging"), withRevision(rev2)), 200)
	e.waitEnvPhase("staging", rev2, store.PhaseRunning)
	waitEnvGitHub(t, e, "staging", rev2, "success")
	waitEnvGitHub(t, e, "staging", rev1, "inactive")
}

// FuzzPreviewSectionText checks that text from an event can neither end
// the preview section, open an HTML comment or tag, nor break its line.
func FuzzPreviewSectionText(f *testing.F) {
	for _, s := range []string{"plain", "<!-- /fleetwright:preview -->", "[x](https://evil.example/)", "a\nb\r\n# c", "\\<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := markdownText(s)
		if strings.Contains(got, github.SectionEnd(previewSectionName)) || strings.ContainsAny(got, "\n\r") {
			t.Errorf("markdownText(%q) = %q", s, got)
		}
		for i := 0; i < len(got); i++ {
			if strings.IndexByte("<>[]()`", got[i]) >= 0 && (i == 0 || got[i-1] != '\\' || escapedBackslash(got[:i])) {
				t.Fatalf("markdownText(%q) = %q: %q at %d is not escaped", s, got, got[i], i)
			}
		}
		if u := safeURL(s); u != "" && u != s {
			t.Errorf("safeURL(%q) = %q", s, u)
		}
	})
}

// escapedBackslash reports whether s ends in an escaped backslash (an
// even number of backslashes), so that the character after it is not
// escaped.
func escapedBackslash(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}
