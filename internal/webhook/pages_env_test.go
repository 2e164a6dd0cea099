package webhook

import (
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// recordEnvDeployment records a deployment of shop/api in env at fleet
// revision n and spec revision spec, running the images given, and walks
// it to phase.
func recordEnvDeployment(t *testing.T, st *store.SQL, env string, n int, spec string, phase store.Phase, images ...string) int64 {
	t.Helper()
	at := pageT0.Add(time.Duration(n) * time.Minute)
	rev := fmt.Sprintf("main@sha1:%x", sha1.Sum(fmt.Appendf(nil, "fleet %d", n)))
	recs, err := st.RecordEvents(t.Context(), []store.Event{{
		DedupeKey: fmt.Sprintf("%s/%d", env, n), ReceivedAt: at, EventTime: at,
		Kind: "Kustomization", Namespace: "flux-system", Name: "shop-api-web", Severity: "info",
		Reason: "ReconciliationSucceeded", Message: "Applied revision " + rev, Revision: rev, Controller: "kustomize-controller",
		App: layout.AppRef{Project: "shop", Name: "api"}, Component: "web", SpecRevision: spec, Environment: env,
		Health: store.HealthHealthy, Body: []byte(`{}`),
	}}, at)
	if err != nil {
		t.Fatal(err)
	}
	id := recs[0].DeploymentID
	ready := check(probe.CheckReadiness, probe.StatePassed, "1 Deployment ready", 1, at)
	ready.Components = []probe.ComponentStatus{{Component: "web", Kind: "Deployment", Name: "api-web", State: probe.StatePassed,
		Images: images, Desired: ptr.To(int32(2)), Updated: ptr.To(int32(2)), Available: ptr.To(int32(2))}}
	raw, err := json.Marshal(probe.Result{Checks: []probe.Check{check(probe.CheckSync, probe.StatePassed, "synced", 1, at), ready,
		check(probe.CheckReachability, probe.StatePassed, "answered", 1, at)}})
	if err != nil {
		t.Fatal(err)
	}
	u := store.DeploymentUpdate{ID: id, Phase: phase, Message: string(phase), Checks: raw, UpdatedAt: at.Add(10 * time.Second)}
	if phase.Final() {
		u.FinishedAt = u.UpdatedAt
	}
	if _, err := st.UpdateDeployment(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestAppPageEnvironments renders the page of an app in staging and
// production (the platform's order) and in qa (an environment the
// webhook was not told of): each environment's release side by side,
// what production lacks of staging's, the promote command, and the
// history and rollback commands of the environment shown.
func TestAppPageEnvironments(t *testing.T) {
	t.Parallel()
	srv, st := pageServer(t, func(c *Config) { c.Environments = []string{"staging", "production"} })
	spec1, spec2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	img1, img2 := "registry.example.test/shop/api@sha256:"+strings.Repeat("a", 64), "registry.example.test/shop/api@sha256:"+strings.Repeat("b", 64)
	recordEnvDeployment(t, st, "production", 0, strings.Repeat("0", 40), store.PhaseRunning, img1)
	recordEnvDeployment(t, st, "staging", 1, spec1, store.PhaseRunning, img1)
	recordEnvDeployment(t, st, "production", 2, spec1, store.PhaseRunning, img1)
	recordEnvDeployment(t, st, "staging", 3, spec2, store.PhaseDeploying, img2)
	recordEnvDeployment(t, st, "qa", 4, spec2, store.PhaseRunning, img2)
	h := srv.Handler()

	rec := get(t, h, "/apps/shop/api?environment=production", testToken)
	if rec.Code != 200 {
		t.Fatalf("GET = %d %s", rec.Code, rec.Body)
	}
	pageGolden(t, "app-environments.html", rec.Body.Bytes())
	body := rec.Body.String()
	for _, want := range []string{
		"render promote shop/api --to production",
		"<li>spec revision " + spec2[:12] + "</li>",
		"<li>image " + img2 + "</li>",
		"staging&#39;s release is deploying: a promotion waits until it runs with every check green",
		"render rollback shop/api --env production --to " + strings.Repeat("0", 40),
		`data-stream="/ui/stream?project=shop&amp;app=api&amp;environment=production"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("production's page lacks %q", want)
		}
	}
	if strings.Contains(body, "qa</b> lacks") || strings.Contains(body, "--to qa") {
		t.Error("an environment the platform does not order lacks what the one listed before it runs")
	}
	// The order: the platform's, then the others by name.
	if s, p, q := strings.Index(body, `id="env-staging"`), strings.Index(body, `id="env-production"`), strings.Index(body, `id="env-qa"`); s < 0 || s > p || p > q {
		t.Errorf("environments in the order %d %d %d", s, p, q)
	}

	// Naming no environment: the newest deployment's (qa).
	if rec := get(t, h, "/apps/shop/api", testToken); rec.Code != 200 || !strings.Contains(rec.Body.String(), `<tr class="env current" id="env-qa">`) {
		t.Errorf("the page naming no environment = %d, shows qa: %v", rec.Code, strings.Contains(rec.Body.String(), `env current" id="env-qa"`))
	}
	for _, env := range []string{"uat", "../production", "Production"} {
		if rec := get(t, h, "/apps/shop/api?environment="+env, testToken); rec.Code != 404 {
			t.Errorf("environment %q = %d", env, rec.Code)
		}
	}
	// The history's pages stay in the environment.
	if u := envAppURL(store.App{AppRef: layout.AppRef{Project: "shop", Name: "api"}, Environment: "production"}, "before=ZDM"); u != "/apps/shop/api?environment=production&before=ZDM" {
		t.Errorf("older page URL = %q", u)
	}
	if u := envAppURL(store.App{AppRef: layout.AppRef{Project: "shop", Name: "api"}}, "before=ZDM"); u != "/apps/shop/api?before=ZDM" {
		t.Errorf("older page URL outside environments = %q", u)
	}
	// The overview links each environment's page.
	if rec := get(t, h, "/", testToken); !strings.Contains(rec.Body.String(), `href="/apps/shop/api?environment=staging"`) {
		t.Errorf("the overview does not link staging's page")
	}
}

// TestConfigEnvironments checks that the webhook refuses environments that
// cannot name one, or name one twice.
func TestConfigEnvironments(t *testing.T) {
	t.Parallel()
	for _, envs := range [][]string{{"staging", "Production"}, {"staging", "staging"}, {""}, {"a/b"}} {
		if err := validateEnvironments(envs); err == nil {
			t.Errorf("environments %q accepted", envs)
		}
	}
	if err := validateEnvironments([]string{"staging", "production"}); err != nil {
		t.Error(err)
	}
}
