package main

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
)

var pinned = regexp.MustCompile(`(?s)kind: OCIRepository\n.*?fleetwright.io/artifact-path: (\S+)\n.*?digest: (sha256:[0-9a-f]{64})\n`)

// pins returns the digest each OCIRepository of the fleet pins, by folder.
func pins(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	var files []string
	for _, pattern := range []string{"clusters/*/apps/*.yaml", "clusters/*/projects/*.yaml", "apps/*/*/_flux/*.yaml"} {
		fs, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(pattern)))
		files = append(files, fs...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			if s := pinned.FindStringSubmatch(doc + "\n"); s != nil {
				m[s[1]] = s[2]
			}
		}
	}
	return m
}

// checkPulled checks that what the registry repo serves under each digest
// of pins is its folder of the fleet out, file for file, byte for byte.
func checkPulled(t *testing.T, repo, out string, pins map[string]string) {
	t.Helper()
	for dir, digest := range pins {
		files, err := artifact.Pull(context.Background(), repo+"@"+digest, nil)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		entries, _ := os.ReadDir(filepath.Join(out, filepath.FromSlash(dir)))
		if len(files) != len(entries) {
			t.Errorf("%s: the artifact has %d files, the folder %d", dir, len(files), len(entries))
		}
		for _, f := range files {
			want, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(path.Join(dir, f.Name))))
			if err != nil || string(want) != string(f.Data) {
				t.Errorf("%s/%s: the artifact's bytes differ from the fleet's (%v)", dir, f.Name, err)
			}
		}
	}
}

// With fleet.artifacts, render pushes each generated component folder as
// an OCI artifact before the fleet lands; what the registry serves under
// each pinned digest is the folder's files, byte for byte, the project's
// Flux files included. A render that changes one component pushes that
// component's artifact and its project's only.
func TestRenderPushesArtifacts(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	repo := reg.Host() + "/fleet/artifacts"
	root := t.TempDir()
	app := func(tag string) string {
		return "name: web\ncomponents:\n" +
			"  - {name: api, type: workload, workload_spec: {image: reg.example.test/api:" + tag + ", port: 80}}\n" +
			"  - {name: worker, type: workload, workload_spec: {image: reg.example.test/worker:1}}\n"
	}
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":          "clusters: [{name: c1}]\nbuild: {pin: false}\nfleet: {artifacts: {repository: " + repo + "}}\n",
		"apps/shop/web/app.yaml": app("1"),
	})
	out := filepath.Join(root, "fleet")
	env := map[string]string{"FLEETWRIGHT_CACHE": t.TempDir()} // the fleet index: unchanged apps are reused
	r := runCmd(t, env, root)
	if r.code != 0 || !strings.Contains(r.stderr, "artifacts: 3 pushed to "+repo+", 0 already there\n") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	first := pins(t, out)
	if len(first) != 3 {
		t.Fatalf("pins %v, want one per component and the project's", first)
	}
	checkPulled(t, repo, out, first)

	// Nothing changed: nothing pushed.
	reg.Reset()
	if r := runCmd(t, env, root); r.code != 0 || !strings.Contains(r.stderr, "artifacts: 0 pushed to "+repo+", 3 already there\n") {
		t.Fatalf("second render: exit %d: %s", r.code, r.stderr)
	}
	if w := reg.Writes(); len(w) != 0 {
		t.Errorf("an unchanged render wrote to the registry: %v", w)
	}

	// One image: the api's artifact and the project's; the worker's is
	// already there (the app is generated again as a whole).
	golden.WriteFiles(t, root, map[string]string{"apps/shop/web/app.yaml": app("2")})
	if r := runCmd(t, env, root); r.code != 0 || !strings.Contains(r.stderr, "artifacts: 2 pushed to "+repo+", 1 already there\n") {
		t.Fatalf("third render: exit %d: %s", r.code, r.stderr)
	}
	second := pins(t, out)
	api, worker, project := "apps/c1/shop/web/api", "apps/c1/shop/web/worker", "apps/c1/shop/_flux"
	if second[api] == first[api] || second[worker] != first[worker] || second[project] == first[project] {
		t.Errorf("pins moved: before %v, after %v", first, second)
	}
	checkPulled(t, repo, out, second)
}

// --offline pushes nothing and says so, and keeps the apps it generated out
// of the fleet index: the next render pushes their artifacts, although the
// fleet files are in place and the index would vouch for them.
func TestOfflineArtifactsArePushedLater(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{})
	repo := reg.Host() + "/fleet"
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":          "clusters: [{name: c1}]\nbuild: {pin: false}\nfleet: {artifacts: {repository: " + repo + "}}\n",
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: api, type: workload, workload_spec: {image: reg.example.test/api:1}}]\n",
	})
	env := map[string]string{"FLEETWRIGHT_CACHE": t.TempDir()}
	r := runCmd(t, env, "--offline", root)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: --offline: the artifacts of 1 app(s) are not pushed to "+repo) {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if w := reg.Writes(); len(w) != 0 {
		t.Fatalf("--offline wrote to the registry: %v", w)
	}
	// A second offline render finds the files aged past the index's racy
	// margin: were they indexed, the next render would reuse them.
	time.Sleep(150 * time.Millisecond)
	if r := runCmd(t, env, "--offline", root); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	time.Sleep(150 * time.Millisecond)
	r = runCmd(t, env, root)
	if r.code != 0 || !strings.Contains(r.stderr, "artifacts: 2 pushed") || !strings.Contains(r.stderr, "0 added, 0 updated") {
		t.Fatalf("render after --offline: exit %d: %s", r.code, r.stderr)
	}
}

// A registry that refuses the push fails the render before anything
// lands: no fleet pins an artifact Flux cannot pull.
func TestArtifactPushFailureWritesNothing(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, registrytest.Options{Username: "u", Password: "p"})
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":          "clusters: [{name: c1}]\nbuild: {pin: false}\nfleet: {artifacts: {repository: " + reg.Host() + "/fleet}}\n",
		"apps/shop/web/app.yaml": "name: web\ncomponents: [{name: api, type: workload, workload_spec: {image: reg.example.test/api:1}}]\n",
	})
	r := runCmd(t, nil, root)
	if r.code == 0 || !strings.Contains(r.stderr, "fleet.artifacts.repository") || !strings.Contains(r.stderr, "artifact of apps/c1/shop/") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "fleet")); !os.IsNotExist(err) {
		t.Errorf("the fleet was written although its artifacts were not pushed (%v)", err)
	}
}
