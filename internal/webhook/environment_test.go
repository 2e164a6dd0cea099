package webhook

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// inEnvironment sets the event's environment metadata, as Flux copies it
// from the event.toolkit.fluxcd.io/environment annotation render writes.
func inEnvironment(env string) func(*eventv1.Event) {
	return func(ev *eventv1.Event) { ev.Metadata[layout.EventAnnotationPrefix+layout.EventEnvironment] = env }
}

// waitEnvPhase polls until the app in env is in the phase at revision rev.
func (e *testEnv) waitEnvPhase(env, rev string, want store.Phase) store.App {
	e.t.Helper()
	var a store.App
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var err error
		if a, err = e.st.App(e.t.Context(), layout.AppRef{Project: "shop", Name: "api"}, env); err == nil && a.Phase == want && a.Revision == rev {
			return a
		}
	}
	e.t.Fatalf("app shop/api in %q = %s at %s (%s), want %s at %s", env, a.Phase, a.Revision, a.Message, want, rev)
	return a
}

// TestEnvironmentsKeepSeparateHistories checks that one app in staging and
// production is two histories: staging's new revisions and failures leave
// production's deployment, phase and GitHub deployment alone; each GitHub
// deployment is in the environment's name (where its protection rules
// apply), leaves the other apps' deployments there active, and retires
// only its own app's earlier one.
func TestEnvironmentsKeepSeparateHistories(t *testing.T) {
	t.Parallel()
	rev2 := "main@sha1:" + strings.Repeat("2", 40)
	rev3 := "main@sha1:" + strings.Repeat("3", 40)
	srv := githubtest.New(t, githubtest.WithToken("gh-token"))
	envs := map[string]bool{"staging": true, "production": true}
	srv.Expect("POST", "/repos/acme/fleet/deployments").Times(4).Body(func(b map[string]any) error {
		env, _ := b["environment"].(string)
		p, _ := b["payload"].(map[string]any)
		if !envs[env] || p["environment"] != env || p["project"] != "shop" || p["app"] != "api" {
			return fmt.Errorf("deployment in environment %q with payload %v", env, p)
		}
		if d, _ := b["description"].(string); !strings.HasPrefix(d, "shop/api in "+env+" at main@sha1:") {
			return fmt.Errorf("description %q", d)
		}
		return nil
	})
	srv.Expect("POST", "/repos/acme/fleet/deployments/*/statuses").Between(5, 12).Body(func(b map[string]any) error {
		if b["auto_inactive"] != false {
			return fmt.Errorf("status without auto_inactive false: %v", b)
		}
		return nil
	})
	fake := &fakeGitHub{Server: srv, client: newGitHubClient(t, srv)}
	e := newTestEnv(t, func(c *Config) {
		c.Prober = fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed, live: "https://api.example.test/"}
		c.GitHub = &GitHub{Reporter: fake.client, Repo: fleetRepo}
	})

	// The same revision in both: two deployments, both running.
	stg := e.mustPost(fixture(t, "kustomization-succeeded", inEnvironment("staging")), 200)
	prod := e.mustPost(fixture(t, "kustomization-succeeded", inEnvironment("production")), 200)
	if stg.DeploymentID == prod.DeploymentID || stg.Environment != "staging" || prod.Environment != "production" {
		t.Fatalf("staging %+v, production %+v", stg, prod)
	}
	e.waitEnvPhase("staging", rev1, store.PhaseRunning)
	e.waitEnvPhase("production", rev1, store.PhaseRunning)
	waitEnvGitHub(t, e, "staging", rev1, "success")
	waitEnvGitHub(t, e, "production", rev1, "success")

	// Staging fails rev2: production keeps running rev1.
	e.mustPost(fixture(t, "kustomization-healthcheckfailed", inEnvironment("staging"), withRevision(rev2)), 200)
	e.waitEnvPhase("staging", rev2, store.PhaseFailed)
	waitEnvGitHub(t, e, "staging", rev2, "failure")
	if a, err := e.st.App(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, "production"); err != nil || a.Phase != store.PhaseRunning || a.DeploymentID != prod.DeploymentID {
		t.Errorf("production after staging's failure = %+v, %v", a, err)
	}
	// Staging runs rev3: its rev1 deployment is retired on GitHub, production's is not.
	e.mustPost(fixture(t, "kustomization-succeeded", inEnvironment("staging"), withRevision(rev3)), 200)
	e.waitEnvPhase("staging", rev3, store.PhaseRunning)
	waitEnvGitHub(t, e, "staging", rev3, "success")
	waitEnvGitHub(t, e, "staging", rev1, "inactive")
	waitEnvGitHub(t, e, "production", rev1, "success")

	// GitHub's view: the last status of each deployment, by environment
	// and commit, every status leaving the other apps' deployments active.
	got := map[string]string{}
	for _, d := range fake.Deployments(fleetRepo.String()) {
		last, _ := d.LastStatus()
		got[d.Environment+" "+d.Ref] = last.State
		for _, s := range d.Statuses {
			if !s.NoAutoInactive {
				t.Errorf("status %s of the deployment in %s posted with auto_inactive", s.State, d.Environment)
			}
		}
	}
	want := map[string]string{
		"staging " + commitOf(rev1):    "inactive",
		"staging " + commitOf(rev2):    "failure",
		"staging " + commitOf(rev3):    "success",
		"production " + commitOf(rev1): "success",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GitHub deployments (-want +got):\n%s", diff)
	}

	// The phase changes: production's never mention staging's revisions.
	prodChanges, err := e.st.AppPhaseChanges(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, "production", 0, 1<<62, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range prodChanges {
		if c.Revision != rev1 || c.Environment != "production" {
			t.Errorf("production's phase change %+v", c)
		}
	}

	// The API: every deployment names its environment; ?environment= filters.
	c, err := api.NewClient(e.ts.URL, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Deployments(t.Context(), "shop", "api", 0)
	if err != nil || len(all) != 4 {
		t.Fatalf("all deployments = %+v, %v", all, err)
	}
	in, err := c.DeploymentsIn(t.Context(), "shop", "api", "staging", 0)
	if err != nil || len(in) != 3 || in[0].Environment != "staging" || in[0].Revision != rev3 || in[2].Revision != rev1 {
		t.Errorf("staging's deployments = %+v, %v", in, err)
	}
	in, err = c.DeploymentsIn(t.Context(), "shop", "api", "production", 0)
	if err != nil || len(in) != 1 || in[0].Environment != "production" || in[0].Phase != api.Phase(store.PhaseRunning) {
		t.Errorf("production's deployments = %+v, %v", in, err)
	}
	var ds DeployStatus
	if code := e.api("/api/v1/apps/shop/api/deploy-status?environment=production", &ds); code != 200 || ds.Environment != "production" || ds.Revision != rev1 || ds.Phase != store.PhaseRunning {
		t.Errorf("production's deploy status = %d %+v", code, ds)
	}
	if code := e.api("/api/v1/apps/shop/api/deploy-status?environment=staging", &ds); code != 200 || ds.Revision != rev3 {
		t.Errorf("staging's deploy status = %d %+v", code, ds)
	}
	var eb errorBody
	if code := e.api("/api/v1/apps/shop/api/deploy-status", &eb); code != 404 || !strings.Contains(eb.Error, "?environment=") {
		t.Errorf("deploy status naming no environment = %d %q", code, eb.Error)
	}
	if code := e.api("/api/v1/apps/shop/api/deployments?environment=qa", &eb); code != 404 || !strings.Contains(eb.Error, "in environment qa") {
		t.Errorf("deployments in an environment the app never ran in = %d %q", code, eb.Error)
	}
	var apps struct{ Apps []store.App }
	if code := e.api("/api/v1/apps", &apps); code != 200 || len(apps.Apps) != 2 || apps.Apps[0].Environment != "production" || apps.Apps[1].Environment != "staging" {
		t.Errorf("apps = %d %+v", code, apps.Apps)
	}
}

// waitEnvGitHub waits until the app's deployment of rev in env has the
// GitHub state want.
func waitEnvGitHub(t *testing.T, e *testEnv, env, rev, want string) {
	t.Helper()
	var last store.Deployment
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ds, err := e.st.DeploymentsIn(t.Context(), layout.AppRef{Project: "shop", Name: "api"}, env, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Revision == rev {
				last = d
				if d.GitHubID != 0 && d.GitHubState == want {
					return
				}
			}
		}
	}
	t.Fatalf("GitHub state of %s in %s = %q, want %q", rev, env, last.GitHubState, want)
}

// TestHostileEnvironment checks that an event whose environment metadata
// cannot name an environment (the sender chooses it) counts for no app:
// no history under a name no platform has, nothing of it in the store
// but why.
func TestHostileEnvironment(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, nil)
	for _, env := range []string{"../production", "Production", "prod\x00uction", strings.Repeat("a", 64), "-staging", "staging@x", "a/b"} {
		_, r := e.post(fixture(t, "kustomization-succeeded", inEnvironment(env)))
		if r.Status != "ignored" || r.DeploymentID != 0 || !strings.Contains(r.Reason, "is not a DNS label") {
			t.Errorf("environment %q: %+v", env, r)
		}
	}
	if apps, err := e.st.Apps(t.Context()); err != nil || len(apps) != 0 {
		t.Errorf("apps = %+v, %v", apps, err)
	}
	var eb errorBody
	if code := e.api("/api/v1/apps/shop/api/deployments?environment="+url.QueryEscape("../x"), &eb); code != 400 {
		t.Errorf("deployments in environment ../x = %d %q", code, eb.Error)
	}
}

// TestClusterResolverEnvironment checks that an event without metadata
// takes its environment from the object's label (or event annotation), as
// it takes its app, on a real API server.
func TestClusterResolverEnvironment(t *testing.T) {
	t.Parallel()
	fluxNS := env.Namespace(t)
	r := NewClusterResolver(env.Client, nil, time.Minute)
	for name, meta := range map[string]metav1.ObjectMeta{
		"shop-api-web": {Labels: map[string]string{layout.LabelApp: "api", layout.LabelProject: "shop", layout.LabelEnvironment: "staging"}},
		"shop-cart-web": {Annotations: map[string]string{layout.EventAnnotationPrefix + layout.EventApp: "cart", layout.EventAnnotationPrefix + layout.EventProject: "shop",
			layout.EventAnnotationPrefix + layout.EventEnvironment: "production"}},
		"shop-bare-web": {Labels: map[string]string{layout.LabelApp: "bare", layout.LabelProject: "shop"}},
	} {
		meta.Name, meta.Namespace = name, fluxNS
		k := &kustomizev1.Kustomization{ObjectMeta: meta, Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./apps", Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"}}}
		if err := env.Client.Create(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"shop-api-web": "staging", "shop-cart-web": "production", "shop-bare-web": ""} {
		owner, ok, err := r.Resolve(t.Context(), kustomizev1.KustomizationKind, fluxNS, name)
		if err != nil || !ok || owner.Environment != want {
			t.Errorf("%s: %+v %v %v, want environment %q", name, owner, ok, err, want)
		}
	}
}

// FuzzValidEnvironment checks validEnvironment, which judges the
// environment an event's sender names, against the DNS label grammar.
func FuzzValidEnvironment(f *testing.F) {
	for _, s := range []string{"staging", "production", "a", "a-b", "-a", "a-", "A", "", "../x", strings.Repeat("a", 63), strings.Repeat("a", 64), "é", "a\x00"} {
		f.Add(s)
	}
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validEnvironment(s), label.MatchString(s); got != want {
			t.Errorf("validEnvironment(%q) = %v, want %v", s, got, want)
		}
	})
}

// readyCounter is fakeChecker counting the readiness checks it ran.
type readyCounter struct {
	fakeChecker
	ready *atomic.Int32
}

func (c readyCounter) Readiness(ctx context.Context, t probe.Target) (probe.Check, bool) {
	c.ready.Add(1)
	return c.fakeChecker.Readiness(ctx, t)
}

// TestEnvironmentOnAnotherClusterIsNotChecked: a webhook reading cluster
// stage-eu checks staging's deployments there, and production's (on
// prod-eu) not at all: this cluster's objects of the same names are
// staging's. Production's events alone judge it, and its readiness and
// reachability say where it runs.
func TestEnvironmentOnAnotherClusterIsNotChecked(t *testing.T) {
	t.Parallel()
	var ready atomic.Int32
	e := newTestEnv(t, func(c *Config) {
		c.Prober = readyCounter{fakeChecker{sync: probe.StatePassed, ready: probe.StatePassed, reach: probe.StatePassed}, &ready}
		c.Pages.ClusterName = "stage-eu"
		c.Pages.EnvironmentClusters = map[string]string{"staging": "stage-eu", "production": "prod-eu"}
	})
	prod := e.mustPost(fixture(t, "kustomization-succeeded", inEnvironment("production")), 200)
	e.waitEnvPhase("production", rev1, store.PhaseRunning)
	if n := ready.Load(); n != 0 {
		t.Errorf("production's deployment was checked on staging's cluster %d time(s)", n)
	}
	d, err := e.st.Deployment(t.Context(), prod.DeploymentID)
	if err != nil {
		t.Fatal(err)
	}
	res := decodeResult(d)
	for _, name := range []string{probe.CheckReadiness, probe.CheckReachability} {
		if c := res.Check(name); c.State != probe.StateSkipped || c.Message != "runs on cluster prod-eu, not this webhook's stage-eu" {
			t.Errorf("production's %s check = %s %q", name, c.State, c.Message)
		}
	}
	e.mustPost(fixture(t, "kustomization-succeeded", inEnvironment("staging")), 200)
	e.waitEnvPhase("staging", rev1, store.PhaseRunning)
	if ready.Load() == 0 {
		t.Error("staging's deployment was not checked on its own cluster")
	}
}
