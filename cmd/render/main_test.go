package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

type result struct {
	code           int
	stdout, stderr string
}

func runCmd(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(k string) string { return env[k] }})
	code := cli.Code(err, &errb)
	return result{code, out.String(), errb.String()}
}

func TestValidateExamples(t *testing.T) {
	t.Parallel()
	r := runCmd(t, nil, "validate", "../../examples")
	if r.code != 0 || !strings.Contains(r.stderr, "6 app(s), 10 component(s): valid") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestValidateCountsAppsOnce: an app in two environments is one app, in
// two copies.
func TestValidateCountsAppsOnce(t *testing.T) {
	t.Parallel()
	r := runCmd(t, nil, "validate", "../../examples/environments")
	if r.code != 0 || !strings.Contains(r.stderr, "1 app(s) (2 copies across environments), 2 component(s): valid") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, nil, "validate", "--format", "json", "../../examples/environments")
	if r.code != 0 || !strings.Contains(r.stdout, `"apps": 1,`) || !strings.Contains(r.stdout, `"copies": 2,`) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

const badApp = `name: api
components:
  - name: web
    type: workload
    workload_spec:
      image: nginx:1.27
      prot: 8080
      resources: {requests: {cpu: 10m, memory: 16Mi}}
      probes: {readiness: {exec: {command: [cat, /tmp/ready]}}, liveness: {exec: {command: [cat, /tmp/live]}}}
`

func TestValidateInvalid(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{"apps/shop/api/app.yaml": badApp})
	file := filepath.Join(root, "apps/shop/api/app.yaml")

	r := runCmd(t, nil, "validate", root)
	want := file + ":7:7: components[0].workload_spec.prot: unknown field \"prot\"; did you mean \"port\"?\n"
	if r.code != 1 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}

	r = runCmd(t, map[string]string{"GITHUB_ACTIONS": "true"}, "validate", root)
	if !strings.Contains(r.stdout, "::error col=7,file="+file+",line=7,title=components[0].workload_spec.prot::unknown field") {
		t.Errorf("no GitHub annotation:\n%s", r.stdout)
	}

	r = runCmd(t, nil, "validate", "--format", "json", root)
	if r.code != 1 || !strings.Contains(r.stdout, `"line": 7`) || !strings.Contains(r.stdout, `"valid": false`) {
		t.Errorf("json output:\n%s", r.stdout)
	}

	if r := runCmd(t, nil, "validate", "--format", "xml", root); r.code != 2 {
		t.Errorf("bad flag: exit %d", r.code)
	}
	if r := runCmd(t, nil, "validate", filepath.Join(root, "missing")); r.code != 2 {
		t.Errorf("missing path: exit %d", r.code)
	}
}

func TestRenderWritesAndChecks(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "fleet")
	// With the fleet index on: a same-size hand edit must still be drift.
	cache := t.TempDir()
	env := map[string]string{"FLEETWRIGHT_CACHE": cache}
	r := runCmd(t, env, "--out", out, "../../examples")
	if r.code != 0 || !strings.Contains(r.stderr, "49 added, 0 updated, 0 deleted, 0 unchanged") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r = runCmd(t, env, "--out", out, "../../examples")
	if r.code != 0 || !strings.Contains(r.stderr, "0 added, 0 updated, 0 deleted, 49 unchanged") {
		t.Fatalf("a re-render changed files: %s", r.stderr)
	}
	if r := runCmd(t, env, "--check", "--out", out, "../../examples"); r.code != 0 {
		t.Fatalf("check of a fresh fleet: exit %d\n%s", r.code, r.stdout)
	}
	if idx, _ := filepath.Glob(filepath.Join(cache, "fleet-index", "*")); len(idx) != 1 {
		t.Fatalf("fleet index files: %v", idx)
	}
	// A hand edit is drift.
	dep := filepath.Join(out, "apps/prod-eu/shop/orders/api/deployment-orders-api.yaml")
	b, _ := os.ReadFile(dep)
	if err := os.WriteFile(dep, bytes.Replace(b, []byte("replicas: 2"), []byte("replicas: 9"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, env, "--check", "--out", out, "../../examples")
	if r.code != 1 || !strings.Contains(r.stdout, "-  replicas: 9\n+  replicas: 2\n") {
		t.Fatalf("check of an edited fleet: exit %d\n%s", r.code, r.stdout)
	}
	// --diff exits 1 on a difference, as diff(1) and kubectl diff do.
	r = runCmd(t, env, "--diff", "--out", out, "../../examples")
	if r.code != 1 || !strings.Contains(r.stdout, "+++ "+dep) {
		t.Fatalf("diff: exit %d\n%s", r.code, r.stdout)
	}
	r = runCmd(t, env, "--diff", "--format", "json", "--out", out, "../../examples")
	var doc struct {
		Differs bool
		Changes []struct{ Path, Op, Diff string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || !doc.Differs || len(doc.Changes) != 1 ||
		doc.Changes[0].Path != "apps/prod-eu/shop/orders/api/deployment-orders-api.yaml" || doc.Changes[0].Op != "update" ||
		!strings.Contains(doc.Changes[0].Diff, "+  replicas: 2\n") {
		t.Fatalf("diff --format json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if err := os.WriteFile(dep, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, env, "--diff", "--format", "json", "--out", out, "../../examples")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.Differs || len(doc.Changes) != 0 {
		t.Fatalf("diff --format json of a fresh fleet: exit %d, %v\n%s", r.code, err, r.stdout)
	}
}

// TestInvalidSpecsWriteNothing: a render with a broken spec leaves the fleet
// exactly as it was.
func TestInvalidSpecsWriteNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"apps/shop/ok/app.yaml": "name: ok\ncomponents: [{name: web, type: workload, workload_spec: {image: nginx:1.27}}]\n",
	})
	out := filepath.Join(root, "fleet")
	if r := runCmd(t, nil, "--offline", root); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	before := snapshot(t, out)
	golden.WriteFiles(t, root, map[string]string{
		"apps/shop/ok/app.yaml":  "name: ok\ncomponents: [{name: web, type: workload, workload_spec: {image: nginx:1.28}}]\n",
		"apps/shop/bad/app.yaml": badApp,
	})
	r := runCmd(t, nil, "--offline", root)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was written") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if d := cmp.Diff(before, snapshot(t, out)); d != "" {
		t.Errorf("the fleet changed (-before +after):\n%s", d)
	}
}

// TestOfflineBuiltImage: offline, an image render builds is named by the
// content tag of its inputs, as review names it, with a warning; nothing is
// built or pushed.
func TestOfflineBuiltImage(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":            "registry: registry.example.com/fleet\n",
		"apps/shop/web/app.yaml":   "name: web\ncomponents: [{name: site, type: workload, workload_spec: {build_mode: dockerfile, port: 80}}]\n",
		"apps/shop/web/Dockerfile": "FROM scratch\nCOPY index.html /srv/\n",
		"apps/shop/web/index.html": "v1\n",
	})
	tag, err := build.ContentTag(build.Request{Root: root, Context: "apps/shop/web", Platforms: []string{"linux/amd64", "linux/arm64"}, Mode: build.ModeDockerfile})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fleet")
	r := runCmd(t, nil, "--offline", "--out", out, root)
	image := "registry.example.com/fleet/shop/web-site:" + tag
	if r.code != 0 || !strings.Contains(r.stderr, "warning: image "+image+" is named by its content tag, not built (--offline)\n") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	dep, err := os.ReadFile(filepath.Join(out, "apps/default/shop/web/site/deployment-web-site.yaml"))
	if err != nil || !strings.Contains(string(dep), "image: "+image+"\n") {
		t.Errorf("the Deployment does not run %s (%v):\n%s", image, err, dep)
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPinAndBuild pins registry images by digest and builds a Dockerfile
// workload into the registry; a second render pushes nothing.
func TestPinAndBuild(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host() + "/myorg/api:v1"
	if err := crane.Push(img, ref); err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()

	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml": "registry: " + reg.Host() + "/fleet\nbuild: {platforms: [linux/amd64]}\n",
		"apps/shop/app/app.yaml": `name: app
components:
  - {name: api, type: workload, workload_spec: {image: ` + ref + `, port: 80}}
  - name: site
    type: workload
    workload_spec:
      build_mode: dockerfile
      build: {context: site}
`,
		"apps/shop/app/site/Dockerfile":    "FROM scratch\nCOPY index.html /srv/\nENTRYPOINT [\"/srv/server\"]\n",
		"apps/shop/app/site/index.html":    "<h1>hello</h1>\n",
		"apps/shop/app/site/.dockerignore": "*.tmp\n",
	})
	env := map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}
	r := runCmd(t, env, root)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	fleetDir := filepath.Join(root, "fleet", "apps", "default", "shop", "app")
	api, _ := os.ReadFile(filepath.Join(fleetDir, "api", "deployment-app-api.yaml"))
	if want := ref + "@" + digest.String() + "\"\n"; !strings.Contains(string(api), want) {
		t.Errorf("api not pinned; want %q in\n%s", want, api)
	}
	site, _ := os.ReadFile(filepath.Join(fleetDir, "site", "deployment-app-site.yaml"))
	built := regexp.MustCompile(`image: "?(` + regexp.QuoteMeta(reg.Host()) + `/fleet/shop/app-site:[0-9a-f]+@sha256:[0-9a-f]{64})`).FindSubmatch(site)
	if built == nil {
		t.Fatalf("site not built and pinned:\n%s", site)
	}
	if _, err := crane.Digest(string(built[1])); err != nil {
		t.Errorf("the built image is not in the registry: %v", err)
	}

	reg.Reset()
	if r := runCmd(t, env, root); r.code != 0 || !strings.Contains(r.stderr, "0 updated") {
		t.Fatalf("second render: exit %d: %s", r.code, r.stderr)
	}
	if w := reg.Writes(); len(w) != 0 {
		t.Errorf("a render of unchanged sources wrote to the registry: %v", w)
	}

	// An ignored file changes nothing; a real change rebuilds.
	golden.WriteFiles(t, root, map[string]string{"apps/shop/app/site/notes.tmp": "x"})
	if r := runCmd(t, env, root); !strings.Contains(r.stderr, "0 added, 0 updated") {
		t.Errorf("an ignored file changed the fleet: %s", r.stderr)
	}
	golden.WriteFiles(t, root, map[string]string{"apps/shop/app/site/index.html": "<h1>hello again</h1>\n"})
	if r := runCmd(t, env, root); !strings.Contains(r.stderr, "1 updated") {
		t.Errorf("a changed file did not change the image: %s", r.stderr)
	}
}

// TestUnreachableRegistry fails before anything is written and names the image.
func TestUnreachableRegistry(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(registrytest.Options{})
	host := reg.Host()
	reg.Close()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"apps/shop/app/app.yaml": "name: app\ncomponents: [{name: api, type: workload, workload_spec: {image: " + host + "/x/api:v1}}]\n",
	})
	r := runCmd(t, nil, root)
	if r.code != 1 || !strings.Contains(r.stderr, host+"/x/api:v1") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "fleet")); !os.IsNotExist(err) {
		t.Errorf("a fleet was written: %v", err)
	}
	if r := runCmd(t, nil, "--offline", root); r.code != 0 || !strings.Contains(r.stderr, "is not pinned by digest (--offline)") {
		t.Fatalf("offline: exit %d: %s", r.code, r.stderr)
	}
}

// TestUnpinnedWarningsAreBounded: with pinning off, the first images left
// unpinned are named and the rest counted, whatever the repository's size.
func TestUnpinnedWarningsAreBounded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{"platform.yaml": "build: {pin: false}\n"}
	for i := range 13 {
		files[fmt.Sprintf("apps/shop/a%02d/app.yaml", i)] = fmt.Sprintf("name: a%02d\ncomponents: [{name: api, type: workload, workload_spec: {image: reg.example.test/a%02d:v1}}]\n", i, i)
	}
	files["apps/shop/pinned/app.yaml"] = "name: pinned\ncomponents: [{name: api, type: workload, workload_spec: {image: reg.example.test/p@sha256:" + strings.Repeat("ab", 32) + "}}]\n"
	golden.WriteFiles(t, root, files)
	r := runCmd(t, nil, root)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "warning: image "); n != 10 {
		t.Errorf("%d images named, want 10:\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: image reg.example.test/a09:v1 is not pinned by digest (pinning is off in platform.yaml)\n") ||
		!strings.Contains(r.stderr, "warning: 3 more image(s) are not pinned by digest (pinning is off in platform.yaml)\n") ||
		strings.Contains(r.stderr, "a10:v1") || strings.Contains(r.stderr, "reg.example.test/p@") {
		t.Errorf("unexpected warnings:\n%s", r.stderr)
	}
}

// TestOutMustNotMixWithSpecs: render refuses to write the fleet where its
// apps/ tree would land among the specs, and writes nothing.
func TestOutMustNotMixWithSpecs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: site, type: workload, workload_spec: {image: nginx:1.27}}]\n",
	})
	before := snapshot(t, root)
	for _, out := range []string{root, filepath.Join(root, "apps"), filepath.Join(root, "apps", "fleet"), filepath.Join(root, "templates", "x")} {
		r := runCmd(t, nil, "--offline", "--out", out, root)
		if r.code != 2 || !strings.Contains(r.stderr, "would mix with the specs") {
			t.Errorf("--out %s: exit %d: %s", out, r.code, r.stderr)
		}
	}
	if d := cmp.Diff(before, snapshot(t, root)); d != "" {
		t.Errorf("the repository changed (-before +after):\n%s", d)
	}
	if r := runCmd(t, nil, "--offline", "--out", filepath.Join(root, "fleet"), root); r.code != 0 {
		t.Errorf("--out fleet: exit %d: %s", r.code, r.stderr)
	}
}

// TestBareFolderIsAPath: `render examples` renders the folder; a word that
// names nothing is an unknown command.
func TestBareFolderIsAPath(t *testing.T) {
	t.Parallel()
	if r := runCmd(t, nil, "valdiate"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "valdiate"; did you mean "validate"?`) {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	if !isVerb("valdiate") || isVerb("../render") || isVerb("main_test.go") || isVerb("testdata") {
		t.Error("isVerb takes a path for a command or a command for a path")
	}
}
