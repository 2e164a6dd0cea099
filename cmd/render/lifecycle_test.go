package main

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/golden"
)

// copyLifecycleRepo copies testdata/lifecycle/repo into a temporary folder.
func copyLifecycleRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, readRepoFiles(t, "testdata/lifecycle/repo"))
	return root
}

// readRepoFiles reads every file under root by slash path.
func readRepoFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compareLifecycleGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.File(t, filepath.Join("testdata", "lifecycle", name), got)
}

// repoDiff is the unified diff between two trees.
func repoDiff(before, after map[string]string) string {
	var changes []fleet.Change
	for _, p := range slices.Sorted(maps.Keys(before)) {
		a, ok := after[p]
		switch {
		case !ok:
			changes = append(changes, fleet.Change{Path: p, Op: fleet.Delete, Old: []byte(before[p])})
		case a != before[p]:
			changes = append(changes, fleet.Change{Path: p, Op: fleet.Update, Old: []byte(before[p]), New: []byte(a)})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[p]; !ok {
			changes = append(changes, fleet.Change{Path: p, Op: fleet.Add, New: []byte(after[p])})
		}
	}
	return fleet.Diff(changes, "")
}

// TestEditGolden runs each edit on the commented YAML spec and on the JSON
// spec and compares the whole change to the repository, as a diff, with a
// golden file: only the intended lines may change.
func TestEditGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before [][]string // run first, not part of the diff
		args   []string
		stdout string
	}{
		{name: "pause-yaml", args: []string{"pause", "shop/api"}, stdout: "paused shop/api"},
		{name: "pause-json", args: []string{"pause", "web"}, stdout: "paused shop/web"},
		{name: "resume-yaml", before: [][]string{{"pause", "api"}}, args: []string{"resume", "api"}, stdout: "resumed shop/api"},
		{name: "resume-json", before: [][]string{{"pause", "web"}}, args: []string{"resume", "web"}, stdout: "resumed shop/web"},
		{name: "scale-yaml", args: []string{"scale", "api", "server", "4"}, stdout: "scaled shop/api server to 4 replicas"},
		{name: "scale-yaml-new-key", args: []string{"scale", "api", "worker", "3"}, stdout: "scaled shop/api worker to 3 replicas"},
		{name: "scale-bounds-yaml", args: []string{"scale", "api", "server", "--min", "3", "--max", "20"}, stdout: "scaled shop/api server autoscaling to min 3, max 20 replicas"},
		{name: "scale-bounds-yaml-new-map", args: []string{"scale", "api", "worker", "--min", "1", "--max", "4"}, stdout: "scaled shop/api worker autoscaling to min 1, max 4 replicas"},
		{name: "scale-json", args: []string{"scale", "web", "frontend", "5"}, stdout: "scaled shop/web frontend to 5 replicas"},
		{name: "scale-bounds-json", args: []string{"scale", "web", "frontend", "--max", "6", "--min", "2"}, stdout: "scaled shop/web frontend autoscaling to min 2, max 6 replicas"},
		{name: "scale-template-parameter", args: []string{"scale", "jobs", "worker", "3"}, stdout: "scaled shop/jobs worker to 3 replicas"},
		{name: "new-yaml", args: []string{"new", "blog", "--project", "shop", "--image", "nginx:1.27", "--port", "80", "--replicas", "2", "--host", "blog.example.com"}, stdout: "created"},
		{name: "new-json", args: []string{"new", "--json", "status", "--project", "shop", "--dockerfile", "Dockerfile", "--port", "8080"}, stdout: "created"},
		{name: "delete", args: []string{"delete", "reports"}, stdout: "deleted shop/reports"},
		{name: "capture-yaml", args: []string{"template", "capture", "api", "api-stack", "--param", "image=components[server].workload_spec.image", "--param", "replicas=components[server].workload_spec.replicas", "--param", "host=components[server].workload_spec.ingress.host"}, stdout: "wrote"},
		{name: "capture-json", args: []string{"template", "capture", "shop/web", "web-stack", "--param", "replicas=$.components[frontend].workload_spec.replicas", "--version", "0.1.0"}, stdout: "wrote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyLifecycleRepo(t)
			for _, b := range tt.before {
				if r := runCmd(t, nil, append(b, "--repo", root)...); r.code != 0 {
					t.Fatalf("%v: exit %d\n%s", b, r.code, r.stderr)
				}
			}
			before := readRepoFiles(t, root)
			r := runCmd(t, nil, append(tt.args, "--repo", root)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.stdout) {
				t.Errorf("stdout %q does not say %q", r.stdout, tt.stdout)
			}
			after := readRepoFiles(t, root)
			compareLifecycleGolden(t, tt.name+".diff", repoDiff(before, after))
			// The result is valid.
			if v := runCmd(t, nil, "validate", root); v.code != 0 {
				t.Errorf("the edited repository is invalid:\n%s", v.stdout)
			}
		})
	}
}

// TestPauseResumeRestores checks that resuming after pausing gives back
// the file byte for byte.
func TestPauseResumeRestores(t *testing.T) {
	t.Parallel()
	root := copyLifecycleRepo(t)
	before := readRepoFiles(t, root)
	for _, args := range [][]string{{"pause", "api"}, {"pause", "web"}, {"resume", "api"}, {"resume", "web"}} {
		if r := runCmd(t, nil, append(args, "--repo", root)...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if d := repoDiff(before, readRepoFiles(t, root)); d != "" {
		t.Errorf("pause then resume changed the repository:\n%s", d)
	}
	r := runCmd(t, nil, "resume", "api", "--repo", root)
	if r.code != 0 || !strings.Contains(r.stdout, "not paused") {
		t.Errorf("resume of a running app: exit %d, %q", r.code, r.stdout)
	}
}

// TestInvalidChangeWritesNothing runs edits whose result is invalid and
// checks that they fail and leave every file as it was.
func TestInvalidChangeWritesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"too many replicas", []string{"scale", "api", "server", "5000"}, 1, "components[1].workload_spec.replicas: must be ≤ 1000; got 5000"},
		{"min above max", []string{"scale", "web", "frontend", "--min", "9", "--max", "3"}, 1, "min_replicas (9) is greater than max_replicas (3)"},
		{"autoscaling without max", []string{"scale", "api", "worker", "--min", "2"}, 1, `missing required field "max_replicas"`},
		{"bad app name", []string{"new", "Blog", "--project", "shop", "--image", "nginx"}, 1, "apps/shop/Blog/app.yaml:2:7: name: must consist of lowercase letters"},
		{"replicas not a number", []string{"scale", "jobs", "worker", "x"}, 2, "REPLICAS must be a whole number ≥ 0, got \"x\""},
		{"delete with users", []string{"delete", "api"}, 1, "apps/shop/web/app.json:13:45: components[0].workload_spec.env[0].export_ref: API_URL of shop/web (server.url)"},
		{"unknown app", []string{"pause", "apy"}, 1, `no app "apy"`},
		{"unknown component", []string{"scale", "api", "cache", "2"}, 1, `shop/api has no component "cache"; its workloads: server, worker`},
		{"addon", []string{"scale", "api", "db", "2"}, 1, `component "db" is an addon`},
		{"template value not a parameter", []string{"scale", "jobs", "worker", "--min", "1", "--max", "2"}, 1, "is not a parameter"},
		{"existing app", []string{"new", "api", "--project", "shop", "--image", "x"}, 1, "already exists"},
		{"capture of a template app", []string{"template", "capture", "jobs", "x"}, 1, "already uses template worker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyLifecycleRepo(t)
			before := readRepoFiles(t, root)
			r := runCmd(t, nil, append(tt.args, "--repo", root)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tt.stderr, r.stderr)
			}
			if d := repoDiff(before, readRepoFiles(t, root)); d != "" {
				t.Errorf("a failed change wrote:\n%s", d)
			}
		})
	}
}

func TestNewSchemaReference(t *testing.T) {
	t.Parallel()
	// Inside a checkout that has schema/, a new spec points at it by
	// relative path.
	top := t.TempDir()
	writeFiles(t, top, map[string]string{"schema/app.schema.json": "{}", "examples/platform.yaml": "apps_domain: example.com\n"})
	r := runCmd(t, nil, "new", "hello", "--project", "demo", "--image", "nginx", "--repo", filepath.Join(top, "examples"))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(top, "examples/apps/demo/hello/app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "# yaml-language-server: $schema=../../../../schema/app.schema.json\n"; !strings.HasPrefix(string(b), want) {
		t.Errorf("first line of %s, want %q", b, want)
	}
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	root := copyLifecycleRepo(t)
	before := readRepoFiles(t, root)
	r := runCmd(t, nil, "scale", "api", "server", "4", "--dry-run", "--repo", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := "-      replicas: 2                # enough for now\n+      replicas: 4                # enough for now\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("dry run printed:\n%s\nwant it to hold:\n%s", r.stdout, want)
	}
	if d := repoDiff(before, readRepoFiles(t, root)); d != "" {
		t.Errorf("a dry run wrote:\n%s", d)
	}
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		pos  []string
		min  int
	}{
		{[]string{"api", "web", "3"}, []string{"api", "web", "3"}, -1},
		{[]string{"--min", "2", "api", "web"}, []string{"api", "web"}, 2},
		{[]string{"api", "--min", "2", "web"}, []string{"api", "web"}, 2},
		{[]string{"api", "--", "--min"}, []string{"api", "--min"}, -1},
	}
	for _, tt := range tests {
		fs := newFlags("t", stdio{err: &strings.Builder{}})
		min := fs.Int("min", -1, "")
		pos, err := parseArgs(fs, tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if d := cmp.Diff(tt.pos, pos); d != "" || *min != tt.min {
			t.Errorf("%v: positional %v, min %d; want %v, %d", tt.args, pos, *min, tt.pos, tt.min)
		}
	}
}
