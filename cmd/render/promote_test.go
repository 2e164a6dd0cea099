package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// fakeVerdicts is a webhook status API on a real listener that answers
// GET …/deployments?environment= with api.DeploymentPage, as the webhook
// does, from the deployments set.
type fakeVerdicts struct {
	mu   sync.Mutex
	deps []api.Deployment
}

func (f *fakeVerdicts) set(deps ...api.Deployment) { f.mu.Lock(); f.deps = deps; f.mu.Unlock() }

func (f *fakeVerdicts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer s3cret" {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	page := api.DeploymentPage{Deployments: []api.Deployment{}}
	for _, d := range f.deps {
		if r.URL.Path == "/api/v1/apps/"+d.Project+"/"+d.App+"/deployments" && d.Environment == r.URL.Query().Get("environment") {
			page.Deployments = append(page.Deployments, d)
		}
	}
	json.NewEncoder(w).Encode(page)
}

// TestPromote walks an app from staging to production in a fleet folder:
// a render of the apps repository writes staging only; a promotion is
// refused while the webhook's verdict on staging's release is not running
// with every check green, goes through once it is, and writes production
// with production's overrides at staging's spec revision and images; the
// next render of a changed spec leaves production byte for byte; --force
// --reason promotes without the verdict.
func TestPromote(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	root := filepath.Join(top, "apps")
	out := filepath.Join(top, "fleet")
	gittest.Git(t, top, "init", "-q", "-b", "main")
	for _, rel := range []string{"platform.yaml", "apps/shop/api/app.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../internal/generate/testdata/environments/specs", rel))
		if err != nil {
			t.Fatal(err)
		}
		golden.WriteFile(t, filepath.Join(root, rel), b)
	}
	commitAll := func() string {
		gittest.Git(t, top, "add", "-A")
		gittest.Git(t, top, "commit", "-q", "-m", "specs")
		return strings.TrimSpace(gittest.Git(t, top, "rev-parse", "HEAD"))
	}
	c1 := commitAll()
	token := filepath.Join(top, "token")
	golden.WriteFile(t, token, []byte("s3cret\n"))
	hook := &fakeVerdicts{}
	srv := httptest.NewServer(hook)
	defer srv.Close()

	if r := runCmd(t, nil, "--offline", "--mode", "dir", "--out", out, root); r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	read := func(rel string) []byte {
		b, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
		return b
	}
	prodDeploy := "apps/prod-eu/shop/api/api/deployment-api-api.yaml"
	if read(prodDeploy) != nil {
		t.Fatal("a render of the apps repository wrote production")
	}
	staging, err := generate.ParseRelease(read(layout.ReleaseFile("stage-eu", "shop", "api")))
	if err != nil || staging.SpecRevision != c1 {
		t.Fatalf("staging's release %+v (%v), want spec revision %s", staging, err, c1)
	}
	promote := func(extra ...string) result {
		args := append([]string{"promote", "shop/api", "--to", "production", "--repo", root, "--mode", "dir", "--out", out, "--offline",
			"--webhook", srv.URL, "--token-file", token}, extra...)
		return runCmd(t, nil, args...)
	}
	green := json.RawMessage(`{"checks":[{"name":"sync","state":"passed"},{"name":"readiness","state":"passed"},{"name":"reachability","state":"passed"}]}`)
	dep := func(id int64, phase string, checks json.RawMessage) api.Deployment {
		return api.Deployment{ID: id, Project: "shop", App: "api", Environment: "staging", SpecRevision: c1, Phase: api.Phase(phase), StartedAt: time.Unix(1700000000, 0).UTC(), Checks: checks}
	}

	// Refused: the release failed in staging, or has not run there. The
	// refusal comes first, not under the specs' warnings.
	for name, deps := range map[string][]api.Deployment{
		"failed":    {dep(2, "failed", green)},
		"red check": {dep(2, "running", json.RawMessage(`{"checks":[{"name":"sync","state":"passed"},{"name":"readiness","state":"failed","message":"0/1 ready"}]}`))},
		"not run":   nil,
	} {
		hook.set(deps...)
		r := promote()
		if r.code != 1 || !strings.HasPrefix(r.stderr, "render: not promoted: ") || read(prodDeploy) != nil {
			t.Errorf("%s: exit %d, production written: %v\n%s", name, r.code, read(prodDeploy) != nil, r.stderr)
		}
	}

	// Running with every check green: production gets staging's release,
	// and the specs' warnings are printed.
	hook.set(dep(3, "running", green))
	r := promote()
	if r.code != 0 {
		t.Fatalf("promote: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: components[1].workload_spec: container \"api\" has no readinessProbe") {
		t.Errorf("promote printed no warning of the specs:\n%s", r.stderr)
	}
	prod, err := generate.ParseRelease(read(layout.ReleaseFile("prod-eu", "shop", "api")))
	if err != nil {
		t.Fatal(err)
	}
	if prod.SpecRevision != c1 || prod.AppsCommit != c1 || prod.PromotedFrom != "staging" || prod.Images["api"] != staging.Images["api"] {
		t.Errorf("production's release %+v, staging's %+v", prod, staging)
	}
	if d := read(prodDeploy); !bytes.Contains(d, []byte("replicas: 4")) || !bytes.Contains(d, []byte(layout.LabelEnvironment+": production")) {
		t.Errorf("production's Deployment:\n%s", d)
	}
	for _, want := range []string{"promotion from staging to production", "First release in production", "| api | — | `myorg/api:v1.0.0` |", "deployment-api-api.yaml"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the promotion's summary lacks %q:\n%s", want, r.stdout)
		}
	}

	// main moves on; its render leaves production alone.
	before := read(prodDeploy)
	b, _ := os.ReadFile(filepath.Join(root, "apps/shop/api/app.yaml"))
	golden.WriteFile(t, filepath.Join(root, "apps/shop/api/app.yaml"), bytes.Replace(b, []byte("value: debug"), []byte("value: info"), 1))
	c2 := commitAll()
	if r := runCmd(t, nil, "--offline", "--mode", "dir", "--out", out, root); r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	if !bytes.Equal(read(prodDeploy), before) {
		t.Error("a render of main changed production")
	}
	if !bytes.Contains(read("apps/stage-eu/shop/api/api/deployment-api-api.yaml"), []byte("value: info")) {
		t.Error("a render of main left staging as it was")
	}

	// The new release has not run: refused, unless forced with a reason.
	if r := promote(); r.code != 1 || !strings.Contains(r.stderr, "has not run there yet") {
		t.Errorf("promote of a release the webhook has not seen: exit %d\n%s", r.code, r.stderr)
	}
	if r := promote("--force"); r.code != 2 || !strings.Contains(r.stderr, "--force needs --reason") {
		t.Errorf("--force without --reason: exit %d\n%s", r.code, r.stderr)
	}
	r = promote("--force", "--reason", "hotfix for the checkout outage")
	if r.code != 0 || !strings.Contains(r.stdout, "Forced without the webhook's verdict: hotfix for the checkout outage") {
		t.Fatalf("forced promote: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !bytes.Contains(read(prodDeploy), []byte("value: info")) {
		t.Error("the forced promotion did not bring the new spec to production")
	}
	if !strings.Contains(r.stdout, c2[:12]) || !strings.Contains(r.stdout, "Spec `"+c1[:12]+"` → `"+c2[:12]+"`") {
		t.Errorf("the summary does not list the commits between the releases:\n%s", r.stdout)
	}
}

// TestPromotePullRequest: the promotion lands as its own pull request on
// the fleet repository, titled by what it promotes, its commit message
// carrying the release, and one comment (found again by its marker) that
// lists the commits, the images and the objects that change; the strict
// GitHub fake refuses any other call.
func TestPromotePullRequest(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{"README.md": "the fleet\n"})
	bare := gs.Path("fleet.git")
	api := githubtest.New(t, githubtest.WithToken(landToken))
	top := t.TempDir()
	root := filepath.Join(top, "apps")
	gittest.Git(t, top, "init", "-q", "-b", "main")
	for _, rel := range []string{"platform.yaml", "apps/shop/api/app.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../internal/generate/testdata/environments/specs", rel))
		if err != nil {
			t.Fatal(err)
		}
		if rel == "platform.yaml" {
			b = append(b, "fleet: {path: ., mode: pull-request}\n"...)
		}
		golden.WriteFile(t, filepath.Join(root, rel), b)
	}
	gittest.Git(t, top, "add", "-A")
	gittest.Git(t, top, "commit", "-q", "-m", "api: first release")
	c1 := strings.TrimSpace(gittest.Git(t, top, "rev-parse", "HEAD"))
	env := map[string]string{"GITHUB_TOKEN": landToken}
	landing := []string{"--offline", "--fleet-repo", url, "--github-repo", "acme/fleet", "--github-api", api.URL}

	// The render of main, merged.
	api.Expect("GET", "/repos/acme/fleet/pulls").Query("head", "acme:fleetwright/render").Query("base", "main")
	api.Expect("POST", "/repos/acme/fleet/pulls").JSONField("head", "fleetwright/render").JSONField("title", "fleetwright: update stage-eu/shop/api")
	if r := runCmd(t, env, append(landing, root)...); r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	gittest.Git(t, bare, "update-ref", "refs/heads/main", "refs/heads/fleetwright/render")

	hook := &fakeVerdicts{}
	hook.set(stagingRunning(c1))
	srv := httptest.NewServer(hook)
	defer srv.Close()
	token := filepath.Join(top, "token")
	golden.WriteFile(t, token, []byte("s3cret\n"))

	api.Expect("GET", "/repos/acme/fleet/pulls").Query("head", "acme:fleetwright/promote-production").Query("base", "main")
	api.Expect("POST", "/repos/acme/fleet/pulls").JSONField("head", "fleetwright/promote-production").JSONField("base", "main").
		JSONField("title", "fleetwright: promote shop/api to production")
	api.Expect("GET", "/repos/acme/fleet/issues/2/comments")
	api.Expect("POST", "/repos/acme/fleet/issues/2/comments")
	r := runCmd(t, env, append([]string{"promote", "--to", "production", "--repo", root, "--webhook", srv.URL, "--token-file", token}, landing...)...)
	if r.code != 0 || !strings.Contains(r.stderr, "promotion pull request #2") {
		t.Fatalf("promote: exit %d\n%s", r.code, r.stderr)
	}
	prs := api.PullRequests("acme/fleet")
	if len(prs) != 2 || !strings.Contains(prs[1].Body, "Promoted-Spec-Revision: shop/api "+c1) || !strings.Contains(prs[1].Body, "deployment 7 running, every check green") {
		t.Errorf("the promotion pull request: %+v", prs)
	}
	comments := api.Comments("acme/fleet", 2)
	if len(comments) != 1 {
		t.Fatalf("%d comments on the promotion", len(comments))
	}
	for _, want := range []string{promoteMarker, "## fleetwright: promotion from staging to production", "api: first release", "| api | — | `myorg/api:v1.0.0` |",
		"**1 app(s) added, 0 changed, 0 removed.**", "added — Deployment shop/api-api"} {
		if !strings.Contains(comments[0].Body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, comments[0].Body)
		}
	}
	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "fleetwright/promote-production")
	for _, want := range []string{"apps/prod-eu/shop/api/release.yaml", "clusters/prod-eu/apps/shop-api.yaml", "clusters/prod-eu/projects/shop.yaml", "apps/stage-eu/shop/api/release.yaml"} {
		if !strings.Contains(files, want+"\n") {
			t.Errorf("the promotion branch lacks %s:\n%s", want, files)
		}
	}
	fsck(t, bare)
}

func stagingRunning(rev string) api.Deployment {
	return api.Deployment{ID: 7, Project: "shop", App: "api", Environment: "staging", SpecRevision: rev, Phase: "running", StartedAt: time.Unix(1700000000, 0).UTC(),
		Checks: json.RawMessage(`{"checks":[{"name":"sync","state":"passed"},{"name":"readiness","state":"passed"},{"name":"reachability","state":"passed"}]}`)}
}

// TestPromoteBuiltImage: an app whose image render builds (build_mode
// dockerfile) is promoted with the image its release records, though the
// render of its release has no build of its own for the copies it does
// not promote (staging's, whose files the render of HEAD writes).
func TestPromoteBuiltImage(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	root := filepath.Join(top, "apps")
	out := filepath.Join(top, "fleet")
	gittest.Git(t, top, "init", "-q", "-b", "main")
	golden.WriteFile(t, filepath.Join(root, "platform.yaml"), []byte("apps_domain: apps.example.com\nregistry: registry.example.com/fleet\n"+
		"environments:\n  - {name: staging, cluster: stage-eu}\n  - {name: production, cluster: prod-eu, promote_from: staging}\n"))
	golden.WriteFile(t, filepath.Join(root, "apps/shop/web/app.yaml"), []byte("name: web\ncomponents:\n  - name: site\n    type: workload\n"+
		"    workload_spec: {build_mode: dockerfile, build: {context: site}, port: 8000}\n"))
	golden.WriteFile(t, filepath.Join(root, "apps/shop/web/site/Dockerfile"), []byte("FROM scratch\nCOPY index.html /srv/index.html\n"))
	golden.WriteFile(t, filepath.Join(root, "apps/shop/web/site/index.html"), []byte("web v1\n"))
	gittest.Git(t, top, "add", "-A")
	gittest.Git(t, top, "commit", "-q", "-m", "web")
	c1 := strings.TrimSpace(gittest.Git(t, top, "rev-parse", "HEAD"))
	if r := runCmd(t, nil, "--offline", "--mode", "dir", "--out", out, root); r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	staging, err := os.ReadFile(filepath.Join(out, "apps/stage-eu/shop/web/release.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := generate.ParseRelease(staging)
	if err != nil || !strings.HasPrefix(rel.Images["site"], "registry.example.com/fleet/shop/web-site:") {
		t.Fatalf("staging's release %+v, %v", rel, err)
	}
	token := filepath.Join(top, "token")
	golden.WriteFile(t, token, []byte("s3cret\n"))
	hook := &fakeVerdicts{}
	d := stagingRunning(c1)
	d.App = "web"
	hook.set(d)
	srv := httptest.NewServer(hook)
	defer srv.Close()
	r := runCmd(t, nil, "promote", "shop/web", "--to", "production", "--repo", root, "--mode", "dir", "--out", out, "--offline",
		"--webhook", srv.URL, "--token-file", token)
	if r.code != 0 {
		t.Fatalf("promote: exit %d\n%s", r.code, r.stderr)
	}
	prod, err := os.ReadFile(filepath.Join(out, "apps/prod-eu/shop/web/site/deployment-web-site.yaml"))
	if err != nil || !bytes.Contains(prod, []byte(rel.Images["site"])) {
		t.Errorf("production's Deployment (%v), want staging's image %s:\n%s", err, rel.Images["site"], prod)
	}
}

// TestPromoteArtifacts: with fleet.artifacts (which Flux's lockdown
// needs), a promotion pushes the artifacts of production's component
// folders and of its project's Flux files before the fleet lands, and
// every digest the fleet pins, staging's and production's, is its
// folder's files byte for byte.
func TestPromoteArtifacts(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	repo := reg.Host() + "/fleet/artifacts"
	top := t.TempDir()
	root := filepath.Join(top, "apps")
	out := filepath.Join(top, "fleet")
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml": "build: {pin: false}\nfleet: {artifacts: {repository: " + repo + "}}\n" +
			"environments:\n  - {name: staging, cluster: stage-eu}\n  - {name: production, cluster: prod-eu, promote_from: staging}\n",
		"apps/shop/api/app.yaml": "name: api\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: reg.example.test/api:1, port: 80}}\n",
	})
	gittest.Git(t, top, "init", "-q", "-b", "main")
	gittest.Git(t, top, "add", "-A")
	gittest.Git(t, top, "commit", "-q", "-m", "api")
	c1 := strings.TrimSpace(gittest.Git(t, top, "rev-parse", "HEAD"))
	if r := runCmd(t, nil, "--mode", "dir", "--out", out, root); r.code != 0 || !strings.Contains(r.stderr, "artifacts: 2 pushed to "+repo) {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	token := filepath.Join(top, "token")
	golden.WriteFile(t, token, "s3cret\n")
	hook := &fakeVerdicts{}
	hook.set(stagingRunning(c1))
	srv := httptest.NewServer(hook)
	defer srv.Close()

	r := runCmd(t, nil, "promote", "shop/api", "--to", "production", "--repo", root, "--mode", "dir", "--out", out,
		"--webhook", srv.URL, "--token-file", token)
	if r.code != 0 || !strings.Contains(r.stderr, "artifacts: 2 pushed to "+repo+", 2 already there\n") {
		t.Fatalf("promote: exit %d\n%s", r.code, r.stderr)
	}
	got := pins(t, out)
	for _, dir := range []string{"apps/prod-eu/shop/api/api", "apps/prod-eu/shop/_flux", "apps/stage-eu/shop/api/api", "apps/stage-eu/shop/_flux"} {
		if got[dir] == "" {
			t.Errorf("no OCIRepository pins %s: %v", dir, got)
		}
	}
	checkPulled(t, repo, out, got)
}
