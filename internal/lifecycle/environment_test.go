package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/store"
	"github.com/fleetwright/fleetwright/internal/webhook"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// envRepo is an apps repository whose shop/api runs in two environments,
// one cluster each: staging's spec in apps/shop/api, production's in
// apps/shop/production/api. revs are its commits: both specs, then
// production scaled, then staging scaled.
func envRepo(t *testing.T) (root string, revs []string) {
	t.Helper()
	root = copyRepo(t)
	spec, err := os.ReadFile(filepath.Join(root, "apps/shop/api/app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prod := strings.Replace(string(spec), "timeout: 15m\n", "timeout: 15m\ncluster: production\nproject: shop\n", 1)
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":                     "apps_domain: apps.example.com\nbuild: {pin: false}\nclusters: [{name: staging}, {name: production}]\n",
		"apps/shop/production/api/app.yaml": strings.Replace(prod, "host: api.example.com", "host: api-prod.example.com", 1),
	})
	gittest.Git(t, root, "init", "--quiet", "--initial-branch=main")
	revs = append(revs, commitWorkTree(t, root, "staging and production specs", t0))
	for i, dir := range []string{"apps/shop/production/api", "apps/shop/api"} {
		f := filepath.Join(root, dir, "app.yaml")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		golden.WriteFiles(t, root, map[string]string{dir + "/app.yaml": strings.Replace(string(b), "replicas: 2 ", fmt.Sprintf("replicas: %d ", 3+i), 1)})
		revs = append(revs, commitWorkTree(t, root, "scale "+dir, t0.Add(time.Duration(i+1)*time.Hour)))
	}
	return root, revs
}

// TestEnvironmentHistoryAndRollback checks history and rollback of one
// environment against a real webhook: the deployments are that
// environment's only, a deployment id of another environment is unknown,
// and rolling production back writes production's spec folder and
// nothing of staging's.
func TestEnvironmentHistoryAndRollback(t *testing.T) {
	t.Parallel()
	root, revs := envRepo(t)
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "history.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The same fleet revisions deploy in both environments.
	ids := map[string][]int64{}
	for i, rev := range revs {
		fleetRev := "main@sha1:" + strings.Repeat(string(rune('a'+i)), 40)
		for _, env := range []string{"staging", "production"} {
			at := t0.Add(time.Duration(i) * time.Hour)
			rec, err := st.RecordEvents(ctx, []store.Event{{
				DedupeKey: env + fleetRev, ReceivedAt: at, EventTime: at,
				Kind: "Kustomization", Namespace: "flux-system", Name: "shop-api-server",
				Severity: "info", Reason: "ReconciliationSucceeded", Message: "Applied revision " + fleetRev,
				Revision: fleetRev, Controller: "kustomize-controller", Environment: env,
				App: layout.AppRef{Project: "shop", Name: "api"}, Component: "server", SpecRevision: rev,
				Health: store.HealthHealthy, Body: []byte(`{}`),
			}}, at)
			if err != nil {
				t.Fatal(err)
			}
			ids[env] = append(ids[env], rec[0].DeploymentID)
		}
	}
	srv, err := webhook.New(webhook.Config{Store: st, APIToken: "s3cret", RecheckInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Stop() })
	client, err := api.NewClient(ts.URL, "s3cret", ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	o := lifecycle.Options{Repo: root, App: "shop/api", Deployments: client, Environment: "production", Now: clock(1740844800)}

	h, err := lifecycle.ReadHistory(ctx, o, 50)
	if err != nil {
		t.Fatal(err)
	}
	if h.Environment != "production" || len(h.Paths) != 1 || h.Paths[0] != "apps/shop/production/api" || len(h.Deployments) != 3 {
		t.Fatalf("production's history: %s over %v, %d deployments", h.Environment, h.Paths, len(h.Deployments))
	}
	for _, d := range h.Deployments {
		if d.Environment != "production" {
			t.Errorf("production's history lists %+v", d)
		}
	}
	// Production's folder changed in revs[1] only (and was created in revs[0]).
	if len(h.Revisions) != 2 || h.Revisions[0].Commit != revs[1] {
		t.Errorf("production's revisions = %+v", h.Revisions)
	}
	var text strings.Builder
	if err := h.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text.String(), "shop/api in production (apps/shop/production/api)\n") || strings.Contains(text.String(), "ENVIRONMENT") {
		t.Errorf("production's history as text:\n%s", text.String())
	}

	// Production's first deployment: its spec folder as it was then.
	ch, err := lifecycle.Rollback(ctx, o, fmt.Sprint(ids["production"][0]))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("rollback shop/api in production to deployment %d (%s)", ids["production"][0], revs[0][:12]); ch.Subject != want {
		t.Errorf("subject %q, want %q", ch.Subject, want)
	}
	if !strings.Contains(ch.Body, fmt.Sprintf("That spec was deployed in production as deployment %d", ids["production"][0])) {
		t.Errorf("body:\n%s", ch.Body)
	}
	for p := range ch.Write {
		if !strings.HasPrefix(p, "apps/shop/production/api/") {
			t.Errorf("rolling production back writes %s", p)
		}
	}
	if len(ch.Remove) != 0 || len(ch.Write) == 0 {
		t.Errorf("write %v, remove %v", ch.Write, ch.Remove)
	}
	if _, err := lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{Commit: true, Author: "B <b@example.com>"}); err != nil {
		t.Fatal(err)
	}
	changed := gittest.Git(t, root, "diff", "--name-only", "HEAD~1", "HEAD")
	if changed != "apps/shop/production/api/app.yaml\n" {
		t.Errorf("the rollback commit changed %q", changed)
	}

	// Staging's deployment ids are not production's.
	var refused *lifecycle.RefusedError
	if _, err := lifecycle.Rollback(ctx, o, fmt.Sprint(ids["staging"][0])); !errors.Is(err, lifecycle.ErrNoDeployment) || !errors.As(err, &refused) ||
		!strings.Contains(err.Error(), fmt.Sprintf("no deployment %d of shop/api in production", ids["staging"][0])) {
		t.Errorf("staging's deployment in production: %v", err)
	}
	// Staging, by name: its own folder.
	o.Environment = "staging"
	ch, err = lifecycle.Rollback(ctx, o, fmt.Sprint(ids["staging"][0]))
	if err != nil {
		t.Fatal(err)
	}
	for p := range ch.Write {
		if !strings.HasPrefix(p, "apps/shop/api/") {
			t.Errorf("rolling staging back writes %s", p)
		}
	}
	// An environment the platform has not, and an app address naming another cluster.
	o.Environment = "qa"
	if _, err := lifecycle.ReadHistory(ctx, o, 50); !errors.As(err, &refused) || !strings.Contains(err.Error(), `no environment "qa" on the platform (its clusters: staging, production)`) {
		t.Errorf("environment qa: %v", err)
	}
	o.Environment, o.App = "production", "staging/shop/api"
	if _, err := lifecycle.ReadHistory(ctx, o, 50); err == nil || !strings.Contains(err.Error(), "names cluster staging, but the environment's cluster is production") {
		t.Errorf("staging's app in production: %v", err)
	}
	// Every environment's deployments, each naming its own.
	o.Environment, o.App = "", "production/shop/api"
	if h, err = lifecycle.ReadHistory(ctx, o, 50); err != nil || len(h.Deployments) != 6 {
		t.Fatalf("all deployments: %v, %+v", err, h)
	}
	text.Reset()
	if err := h.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "ENVIRONMENT  ID") || !strings.Contains(text.String(), "\nproduction   ") {
		t.Errorf("every environment's history as text:\n%s", text.String())
	}
}

// TestRollbackRefusedWherePromotionRules: with platform.yaml environments,
// the spec is every environment's, and one with promote_from keeps its
// release until a promotion: a rollback aimed at it is refused with the way
// to do it, and an environment the platform does not list is named as such.
func TestRollbackRefusedWherePromotionRules(t *testing.T) {
	t.Parallel()
	root := copyRepo(t)
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml": "apps_domain: apps.example.com\nbuild: {pin: false}\nclusters: [{name: stage-eu}, {name: prod-eu}]\n" +
			"environments:\n  - {name: staging, cluster: stage-eu}\n  - {name: production, cluster: prod-eu, promote_from: staging}\n",
	})
	gittest.Git(t, root, "init", "--quiet", "--initial-branch=main")
	rev := commitWorkTree(t, root, "two environments", t0)
	for _, tc := range []struct{ env, want string }{
		{"production", "environment production changes only by promotion (promote_from: staging): roll shop/api back in staging, let it run there, then render promote shop/api --to production"},
		{"qa", `no environment "qa" on the platform (its environments: staging, production)`},
	} {
		_, err := lifecycle.Rollback(context.Background(), lifecycle.Options{Repo: root, App: "shop/api", Environment: tc.env, Now: clock(1740844800)}, rev)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("rollback --env %s: %v; want %q", tc.env, err, tc.want)
		}
	}
}
