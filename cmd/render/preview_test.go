package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/crane"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/github/githubtest"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/internal/review"
)

const previewPlatform = `apps_domain: apps.example.com
clusters: [{name: stage-eu}, {name: prod-eu}]
environments:
  - {name: staging, cluster: stage-eu}
  - {name: production, cluster: prod-eu, promote_from: staging}
previews: {cluster: stage-eu, apps_domain: preview.example.com, ttl: 72h, max: 2}
fleet: {notifications: {}}
`

var previewSpecs = map[string]string{
	"platform.yaml": previewPlatform,
	"apps/shop/db/app.yaml": `name: db
components:
  - name: pg
    type: addon
    addon_spec:
      type: postgresql
      chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 15.5.0}
`,
	"apps/shop/api/app.yaml": `name: api
components:
  - name: api
    type: workload
    workload_spec:
      image: myorg/api:v1
      port: 8080
      ingress: {enabled: true, host: api.example.com}
      env:
        - {name: DB_HOST, export_ref: {app: db, component: pg, export_key: host}}
  - name: admin
    type: workload
    workload_spec: {image: myorg/admin:v1, port: 80, ingress: {enabled: true, host: admin.example.com}}
environments:
  staging:
    components:
      api: {workload_spec: {replicas: 2}}
`,
	"apps/shop/docs/app.yaml": `name: docs
components:
  - {name: web, type: workload, workload_spec: {image: myorg/docs:v1, port: 80, ingress: {enabled: true}}}
environments:
  preview: {enabled: false}
`,
}

// previewRepo is an apps repository in Git (main holding previewSpecs)
// and the fleet folder render writes.
type previewRepo struct {
	t              *testing.T
	top, root, out string
}

func newPreviewRepo(t *testing.T) *previewRepo {
	top := t.TempDir()
	r := &previewRepo{t: t, top: top, root: filepath.Join(top, "apps"), out: filepath.Join(t.TempDir(), "fleet")}
	gittest.Git(t, top, "init", "-q", "-b", "main")
	for rel, body := range previewSpecs {
		golden.WriteFile(t, filepath.Join(r.root, rel), body)
	}
	r.commit("specs")
	return r
}

func (r *previewRepo) commit(msg string) string {
	gittest.Git(r.t, r.top, "add", "-A")
	gittest.Git(r.t, r.top, "commit", "-q", "-m", msg)
	return strings.TrimSpace(gittest.Git(r.t, r.top, "rev-parse", "HEAD"))
}

// edit replaces old with new in an app's spec.
func (r *previewRepo) edit(rel, old, new string) {
	p := filepath.Join(r.root, rel)
	b, err := os.ReadFile(p)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		r.t.Fatalf("%s holds no %q (%v)", rel, old, err)
	}
	golden.WriteFile(r.t, p, bytes.Replace(b, []byte(old), []byte(new), 1))
}

// at is SOURCE_DATE_EPOCH hours after a fixed start.
func at(hours int) map[string]string {
	return map[string]string{"SOURCE_DATE_EPOCH": fmt.Sprint(1_800_000_000 + hours*3600)}
}

func (r *previewRepo) render(env map[string]string) result {
	r.t.Helper()
	res := runCmd(r.t, env, "--offline", "--mode", "dir", "--out", r.out, r.root)
	if res.code != 0 {
		r.t.Fatalf("render: exit %d\n%s", res.code, res.stderr)
	}
	return res
}

func (r *previewRepo) preview(env map[string]string, args ...string) result {
	return runCmd(r.t, env, append([]string{"preview", "--repo", r.root, "--mode", "dir", "--out", r.out, "--offline", "--base", "main"}, args...)...)
}

// files reads the fleet folder: the previews' files, or the others.
func (r *previewRepo) files(previews bool) map[string][]byte {
	out := map[string][]byte{}
	if _, err := os.Stat(r.out); os.IsNotExist(err) {
		return out
	}
	err := filepath.WalkDir(r.out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(r.out, p)
		rel = filepath.ToSlash(rel)
		isPreview := strings.HasPrefix(rel, "previews/") || strings.HasPrefix(rel, "clusters/stage-eu/previews/")
		if isPreview == previews && !strings.HasPrefix(rel, ".") {
			b, err := os.ReadFile(p)
			out[rel] = b
			return err
		}
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// TestPreview walks pull requests' previews through a fleet folder: a
// preview holds the apps the pull request changes and those they
// reference, each as written, in <project>-pr<N> with hosts under
// previews.apps_domain, the opted-out app skipped; renders of main before
// and after leave every other file byte for byte; a second push updates
// it (created kept, updated moved); a third preview beyond previews.max is
// refused, naming the open ones; --close removes one; and a render of
// main past previews.ttl removes the one left, saying so.
func TestPreview(t *testing.T) {
	t.Parallel()
	r := newPreviewRepo(t)
	r.render(at(0))
	main1 := r.files(false)

	gittest.Git(t, r.top, "checkout", "-q", "-b", "feature")
	r.edit("apps/shop/api/app.yaml", "myorg/api:v1", "myorg/api:v2")
	r.edit("apps/shop/docs/app.yaml", "myorg/docs:v1", "myorg/docs:v2")
	head1 := r.commit("api v2, docs v2")
	res := r.preview(at(1), "--pr", "5")
	if res.code != 0 {
		t.Fatalf("preview: exit %d\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"- shop/api: https://api-shop-pr5.preview.example.com, https://admin-api-shop-pr5.preview.example.com", "- shop/db (no ingress)",
		"- skipped shop/docs (environments.preview.enabled: false)"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the preview's section lacks %q:\n%s", want, res.stdout)
		}
	}
	golden.Tree(t, "testdata/preview/open", r.files(true))
	rec := r.record(5)
	if rec.Head != head1 || !rec.Created.Equal(rec.Updated) {
		t.Errorf("record: head %s (want %s), created %s, updated %s", rec.Head, head1, rec.Created, rec.Updated)
	}
	for p, b := range r.files(true) {
		if bytes.Contains(b, []byte("api.example.com")) || bytes.Contains(b, []byte("admin.example.com")) {
			t.Errorf("%s holds a production host", p)
		}
	}

	// main again: the environments' files, byte for byte, and the preview
	// stays.
	gittest.Git(t, r.top, "checkout", "-q", "main")
	r.render(at(2))
	if diff := treeDiff(main1, r.files(false)); diff != "" {
		t.Errorf("a preview changed the environments' files:\n%s", diff)
	}
	if _, ok := r.files(true)["previews/stage-eu/pr-5/preview.yaml"]; !ok {
		t.Fatal("a render of main removed the preview")
	}

	// A second push updates it.
	gittest.Git(t, r.top, "checkout", "-q", "feature")
	r.edit("apps/shop/api/app.yaml", "myorg/api:v2", "myorg/api:v3")
	head2 := r.commit("api v3")
	if res := r.preview(at(3), "--pr", "5"); res.code != 0 || !strings.Contains(res.stderr, "preview pr-5 written") {
		t.Fatalf("update: exit %d\n%s", res.code, res.stderr)
	}
	golden.Tree(t, "testdata/preview/update", r.files(true))
	if rec2 := r.record(5); rec2.Head != head2 || !rec2.Created.Equal(rec.Created) || !rec2.Updated.After(rec.Updated) {
		t.Errorf("updated record: %+v", rec2)
	}
	if res := r.preview(at(4), "--pr", "5"); res.code != 0 || !strings.Contains(res.stderr, "up to date") {
		t.Errorf("a run without change: exit %d\n%s", res.code, res.stderr)
	}

	// previews.max: 2.
	if res := r.preview(at(4), "--pr", "6"); res.code != 0 {
		t.Fatalf("preview 6: exit %d\n%s", res.code, res.stderr)
	}
	before := r.files(true)
	res = r.preview(at(4), "--pr", "7")
	if res.code != 1 || !strings.Contains(res.stderr, "2 previews are open (pr-5, pr-6), previews.max is 2; no preview for pull request #7") {
		t.Errorf("preview 7 beyond max: exit %d\n%s", res.code, res.stderr)
	}
	if diff := treeDiff(before, r.files(true)); diff != "" {
		t.Errorf("a refused preview changed the fleet:\n%s", diff)
	}

	// --close, from a head whose specs are broken: it needs the platform
	// only.
	r.edit("apps/shop/api/app.yaml", "port: 8080", "port: eighty")
	r.commit("broken")
	if res := r.preview(at(5), "--pr", "6", "--close"); res.code != 0 || !strings.Contains(res.stderr, "preview pr-6 closed") {
		t.Fatalf("close: exit %d\n%s", res.code, res.stderr)
	}
	golden.Tree(t, "testdata/preview/close", r.files(true))

	// previews.ttl: 72h after its last update, a render of main removes it.
	gittest.Git(t, r.top, "checkout", "-q", "main")
	res = r.render(at(3 + 72 + 1))
	if !strings.Contains(res.stderr, "preview pr-5 removed: last updated 2027-01-15T11:00:00Z, older than previews.ttl 72h0m0s (apps shop/api, shop/db)") {
		t.Errorf("the render does not say it removed the preview:\n%s", res.stderr)
	}
	if left := r.files(true); len(left) != 0 {
		t.Errorf("files left after the ttl: %v", left)
	}
	if diff := treeDiff(main1, r.files(false)); diff != "" {
		t.Errorf("the ttl changed the environments' files:\n%s", diff)
	}
}

// treeDiff tells how two sets of fleet files differ; "" when they do not.
func treeDiff(want, got map[string][]byte) string {
	return cmp.Diff(stringsOf(want), stringsOf(got))
}

func stringsOf(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func (r *previewRepo) record(pr int) *generate.PreviewRecord {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.out, filepath.FromSlash(layout.PreviewRecordFile("stage-eu", pr))))
	if err != nil {
		r.t.Fatal(err)
	}
	rec, err := generate.ParsePreviewRecord(b)
	if err != nil {
		r.t.Fatal(err)
	}
	return rec
}

// TestPreviewPush: a preview is pushed to the fleet branch itself, in one
// commit that names it, its apps and the head commit, and updates the
// Preview section of the pull request's review comment on the apps
// repository (the strict GitHub fake refuses any other call); --close
// pushes its removal.
func TestPreviewPush(t *testing.T) {
	t.Parallel()
	gs := gittest.NewServer(t)
	url := gs.CreateRepo(t, "fleet.git", "main", map[string]string{"README.md": "the fleet\n"})
	bare := gs.Path("fleet.git")
	api := githubtest.New(t, githubtest.WithToken(landToken))
	r := newPreviewRepo(t)
	gittest.Git(t, r.top, "checkout", "-q", "-b", "feature")
	r.edit("apps/shop/docs/app.yaml", "myorg/docs:v1", "myorg/docs:v2")
	r.edit("apps/shop/api/app.yaml", "myorg/api:v1", "myorg/api:v2")
	head := r.commit("api v2")
	pr := api.AddPullRequest("acme/apps", githubtest.PullRequest{Head: "feature", Base: "main", Title: "api v2"})

	// render review writes the comment, its Preview section first.
	env := map[string]string{"GITHUB_TOKEN": landToken, "SOURCE_DATE_EPOCH": "1800000000"}
	api.Expect("GET", "/repos/acme/apps/issues/1/comments")
	api.Expect("POST", "/repos/acme/apps/issues/1/comments")
	if res := runCmd(t, env, "review", "--base", "main", "--head", "feature", "--pr", "1", "--github-repo", "acme/apps", "--github-api", api.URL, "--charts=false", r.root); res.code != 0 {
		t.Fatalf("review: exit %d\n%s", res.code, res.stderr)
	}
	cs := api.Comments("acme/apps", pr)
	if len(cs) != 1 {
		t.Fatalf("%d comments after review", len(cs))
	}
	id := cs[0].ID
	for _, want := range []string{github.SectionStart(review.PreviewSection) + "\n**Preview:** pr-1, deploying — https://api-shop-pr1.preview.example.com\n",
		"- shop/api: https://api-shop-pr1.preview.example.com, https://admin-api-shop-pr1.preview.example.com\n- shop/db (no ingress)\n- skipped shop/docs (environments.preview.enabled: false)\n" + github.SectionEnd(review.PreviewSection)} {
		if !strings.Contains(cs[0].Body, want) {
			t.Errorf("the review comment lacks %q:\n%s", want, cs[0].Body)
		}
	}

	if pr != 1 {
		t.Fatalf("pull request %d", pr)
	}
	args := []string{"preview", "--pr", fmt.Sprint(pr), "--repo", r.root, "--base", "main", "--offline", "--fleet-repo", url, "--fleet-branch", "main",
		"--github-repo", "acme/apps", "--github-api", api.URL}
	api.Expect("GET", "/repos/acme/apps/issues/1/comments")
	api.Expect("PATCH", fmt.Sprintf("/repos/acme/apps/issues/comments/%d", id))
	res := runCmd(t, env, args...)
	if res.code != 0 || !strings.Contains(res.stderr, "pushed ") {
		t.Fatalf("preview: exit %d\n%s", res.code, res.stderr)
	}
	msg := gittest.Git(t, bare, "log", "-1", "--format=%B", "main")
	for _, want := range []string{"fleetwright: open preview pr-1 (shop/api, shop/db)", "shop/api: https://api-shop-pr1.preview.example.com https://admin-api-shop-pr1.preview.example.com",
		"skipped shop/docs: environments.preview.enabled: false", "Spec-Commit: " + head} {
		if !strings.Contains(msg, want) {
			t.Errorf("the commit message lacks %q:\n%s", want, msg)
		}
	}
	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	for _, want := range []string{"README.md", "fleet/clusters/stage-eu/previews/pr-1.yaml", "fleet/previews/stage-eu/pr-1/preview.yaml",
		"fleet/previews/stage-eu/pr-1/apps/stage-eu/shop-pr1/api/api/deployment-api-api.yaml", "fleet/previews/stage-eu/pr-1/clusters/stage-eu/projects/shop-pr1.yaml"} {
		if !strings.Contains(files, want+"\n") {
			t.Errorf("the fleet branch lacks %s:\n%s", want, files)
		}
	}
	if strings.Contains(files, "\nfleet/apps/") || strings.Contains(files, "\nfleet/clusters/stage-eu/apps/") {
		t.Errorf("the preview wrote an environment's files:\n%s", files)
	}
	body := api.Comments("acme/apps", pr)[0].Body
	for _, want := range []string{"**Preview:** pr-1, deploying at `" + head[:12] + "`", "- shop/api: https://api-shop-pr1.preview.example.com, https://admin-api-shop-pr1.preview.example.com",
		"## fleetwright: what this change does to the fleet", "- skipped shop/docs (environments.preview.enabled: false)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}

	// Another pull request's preview, then this one closes: the other
	// stays (each preview owns its own folder and Flux file on the fleet
	// branch).
	other := []string{"preview", "--pr", "2", "--repo", r.root, "--base", "main", "--offline", "--fleet-repo", url, "--fleet-branch", "main"}
	if res := runCmd(t, map[string]string{"SOURCE_DATE_EPOCH": "1800000000"}, other...); res.code != 0 {
		t.Fatalf("preview 2: exit %d\n%s", res.code, res.stderr)
	}
	api.Expect("GET", "/repos/acme/apps/issues/1/comments")
	api.Expect("PATCH", fmt.Sprintf("/repos/acme/apps/issues/comments/%d", id))
	res = runCmd(t, env, append(args, "--close")...)
	if res.code != 0 || !strings.Contains(res.stderr, "preview pr-1 closed") {
		t.Fatalf("close: exit %d\n%s", res.code, res.stderr)
	}
	files = gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	if strings.Contains(files, "pr-1") || !strings.Contains(files, "fleet/previews/stage-eu/pr-2/preview.yaml\n") || !strings.Contains(files, "fleet/clusters/stage-eu/previews/pr-2.yaml\n") {
		t.Errorf("after --close of pr-1 the fleet branch holds:\n%s", files)
	}
	if msg := gittest.Git(t, bare, "log", "-1", "--format=%s", "main"); strings.TrimSpace(msg) != "fleetwright: close preview pr-1" {
		t.Errorf("close commit: %q", msg)
	}
	if body := api.Comments("acme/apps", pr)[0].Body; !strings.Contains(body, "**Preview:** pr-1, closed") {
		t.Errorf("the comment after close:\n%s", body)
	}

	// A render pushed 73 hours later removes pr-2, and says so in its
	// commit.
	res = runCmd(t, map[string]string{"SOURCE_DATE_EPOCH": fmt.Sprint(1800000000 + 73*3600)}, "--offline", "--mode", "push", "--fleet-repo", url, "--fleet-branch", "main", r.root)
	if res.code != 0 || !strings.Contains(res.stderr, "preview pr-2 removed") {
		t.Fatalf("render: exit %d\n%s", res.code, res.stderr)
	}
	if msg := gittest.Git(t, bare, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, "preview pr-2 removed: last updated 2027-01-15T08:00:00Z, older than previews.ttl 72h0m0s (apps shop/api, shop/db)") {
		t.Errorf("the render's commit message:\n%s", msg)
	}
	files = gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	if strings.Contains(files, "previews/") || !strings.Contains(files, "fleet/clusters/stage-eu/apps/shop-api.yaml\n") {
		t.Errorf("after the ttl the fleet branch holds:\n%s", files)
	}
	fsck(t, bare)
}

// A spec's patch that adds a host the app owns in its environments (the
// admin workload's production host, on the api's Ingress) would make the
// preview answer for production: the preview is refused at the patch's
// line, and nothing is written.
func TestPreviewRefusesAPatchedHost(t *testing.T) {
	t.Parallel()
	r := newPreviewRepo(t)
	gittest.Git(t, r.top, "checkout", "-q", "-b", "feature")
	r.edit("apps/shop/api/app.yaml", "      env:\n", `      patches:
        - patch: |
            - {op: add, path: /spec/rules/-, value: {host: admin.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api-api, port: {number: 8080}}}}]}}}
          target: {kind: Ingress}
      env:
`)
	r.commit("api answers for admin too")
	if res := runCmd(t, nil, "validate", r.root); res.code != 0 {
		t.Fatalf("the patch is valid in the environments: exit %d\n%s", res.code, res.stderr)
	}
	res := r.preview(at(1), "--pr", "3")
	if res.code != 1 || !strings.Contains(res.stderr, `apps/shop/api/app.yaml:10:11: components[0].workload_spec.patches[0]: Ingress/api-api spec.rules[1].host: host "admin.example.com" is not one app api claims`) {
		t.Errorf("preview: exit %d\n%s", res.code, res.stderr)
	}
	if files := r.files(true); len(files) != 0 {
		t.Errorf("a refused preview wrote %d file(s)", len(files))
	}
}

// TestPreviewBuildsFromTheHead: the images a preview builds come from the
// pull request's head commit (not the checkout, which may hold anything
// else), are pushed as render pushes them, under the project's own
// repository, and are pinned by digest in the preview.
func TestPreviewBuildsFromTheHead(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	top := t.TempDir()
	root := filepath.Join(top, "apps")
	out := filepath.Join(t.TempDir(), "fleet")
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml": "registry: " + reg.Host() + "/fleet\nbuild: {platforms: [linux/amd64]}\nclusters: [{name: stage-eu}]\n" +
			"previews: {cluster: stage-eu, apps_domain: preview.example.com}\n",
		"apps/shop/app/app.yaml": `name: app
components:
  - name: site
    type: workload
    workload_spec:
      port: 80
      build_mode: dockerfile
      build: {context: site}
      ingress: {enabled: true}
`,
		"apps/shop/app/site/Dockerfile": "FROM scratch\nCOPY index.html /srv/\nENTRYPOINT [\"/srv/server\"]\n",
		"apps/shop/app/site/index.html": "<h1>main</h1>\n",
	})
	gittest.Git(t, top, "init", "-q", "-b", "main")
	gittest.Git(t, top, "add", "-A")
	gittest.Git(t, top, "commit", "-q", "-m", "site")
	gittest.Git(t, top, "checkout", "-q", "-b", "feature")
	golden.WriteFiles(t, root, map[string]string{"apps/shop/app/site/index.html": "<h1>head</h1>\n"})
	gittest.Git(t, top, "commit", "-q", "-am", "head")
	// The checkout holds something else than the head.
	golden.WriteFiles(t, root, map[string]string{"apps/shop/app/site/index.html": "<h1>uncommitted</h1>\n"})

	env := map[string]string{"SOURCE_DATE_EPOCH": "1800000000"}
	res := runCmd(t, env, "preview", "--pr", "3", "--repo", root, "--base", "main", "--mode", "dir", "--out", out)
	if res.code != 0 {
		t.Fatalf("preview: exit %d\n%s", res.code, res.stderr)
	}
	deploy, err := os.ReadFile(filepath.Join(out, "previews/stage-eu/pr-3/apps/stage-eu/shop-pr3/app/site/deployment-app-site.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`image: "?(` + regexp.QuoteMeta(reg.Host()) + `/fleet/shop/app-site:[0-9a-f]+@sha256:[0-9a-f]{64})`).FindSubmatch(deploy)
	if m == nil {
		t.Fatalf("the preview's image is not built into the project's repository and pinned:\n%s", deploy)
	}
	img, err := crane.Pull(string(m[1]))
	if err != nil {
		t.Fatalf("the built image is not in the registry: %v", err)
	}
	var tarball bytes.Buffer
	if err := crane.Export(img, &tarball); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(tarball.Bytes(), []byte("<h1>head</h1>")) || bytes.Contains(tarball.Bytes(), []byte("uncommitted")) {
		t.Errorf("the image was not built from the head commit")
	}
}

// TestPreviewArtifacts: with fleet.artifacts, a preview's components and
// its project's Flux files are artifacts too, named after their folders in
// the preview's, pushed before the preview lands: what the registry serves
// under each digest the preview pins is that folder's files, byte for
// byte, and the preview's Kustomizations read them in the preview
// namespace (no reference across namespaces, as Flux's lockdown wants).
func TestPreviewArtifacts(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	repo := reg.Host() + "/fleet/artifacts"
	top := t.TempDir()
	root := filepath.Join(top, "apps")
	out := filepath.Join(t.TempDir(), "fleet")
	app := func(tag string) string {
		return "name: web\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: reg.example.test/api:" + tag + ", port: 80, ingress: {enabled: true}}}\n"
	}
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml": "clusters: [{name: c1}]\nbuild: {pin: false}\nfleet: {artifacts: {repository: " + repo + "}}\n" +
			"previews: {cluster: c1, apps_domain: preview.example.com}\n",
		"apps/shop/web/app.yaml": app("1"),
	})
	gittest.Git(t, top, "init", "-q", "-b", "main")
	gittest.Git(t, top, "add", "-A")
	gittest.Git(t, top, "commit", "-q", "-m", "web")
	gittest.Git(t, top, "checkout", "-q", "-b", "feature")
	golden.WriteFiles(t, root, map[string]string{"apps/shop/web/app.yaml": app("2")})
	gittest.Git(t, top, "commit", "-q", "-am", "web 2")

	res := runCmd(t, map[string]string{"SOURCE_DATE_EPOCH": "1800000000"}, "preview", "--pr", "2", "--repo", root, "--base", "main", "--mode", "dir", "--out", out)
	if res.code != 0 || !strings.Contains(res.stderr, "artifacts: 2 pushed to "+repo) {
		t.Fatalf("preview: exit %d\n%s", res.code, res.stderr)
	}
	got := map[string]string{}
	for _, f := range []string{"previews/c1/pr-2/clusters/c1/projects/shop-pr2.yaml", "previews/c1/pr-2/apps/c1/shop-pr2/_flux/web.yaml"} {
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			if s := pinned.FindStringSubmatch(doc + "\n"); s != nil {
				got[s[1]] = s[2]
				if !strings.Contains(doc, "namespace: shop-pr2\n") {
					t.Errorf("an OCIRepository of the preview outside its namespace:\n%s", doc)
				}
			}
		}
	}
	want := []string{"previews/c1/pr-2/apps/c1/shop-pr2/_flux", "previews/c1/pr-2/apps/c1/shop-pr2/web/api"}
	if len(got) != len(want) || got[want[0]] == "" || got[want[1]] == "" {
		t.Fatalf("pins %v, want %v", got, want)
	}
	checkPulled(t, repo, out, got)
	b, _ := os.ReadFile(filepath.Join(out, "previews/c1/pr-2/apps/c1/shop-pr2/_flux/web.yaml"))
	if !bytes.Contains(b, []byte("    kind: OCIRepository\n    name: shop-pr2-web-api\n")) || bytes.Contains(b, []byte("flux-system")) {
		t.Errorf("the preview's component Kustomization does not read its artifact in its namespace:\n%s", b)
	}
}
