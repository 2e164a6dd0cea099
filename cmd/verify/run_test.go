package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

// appsRepo copies the examples into a new folder and renders their fleet
// into its fleet/ folder, as render does. With commit, the folder is a Git
// repository: the specs are committed first, then the fleet, rendered with
// the spec revisions render writes.
func appsRepo(t *testing.T, commit bool) string {
	t.Helper()
	return appsRepoWith(t, commit, "")
}

// appsRepoWith is appsRepo with platform.yaml's fleet section extended by
// fleet (indented lines).
func appsRepoWith(t *testing.T, commit bool, fleetLines string) string {
	t.Helper()
	dir := t.TempDir()
	err := os.CopyFS(dir, os.DirFS("../../examples"))
	if err != nil {
		t.Fatal(err)
	}
	if fleetLines != "" {
		p := filepath.Join(dir, "platform.yaml")
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte("\nfleet:\n")) {
			t.Fatalf("platform.yaml without a fleet section (%v)", err)
		}
		if err := os.WriteFile(p, bytes.Replace(data, []byte("\nfleet:\n"), []byte("\nfleet:\n"+fleetLines), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if commit {
		git(t, dir, "init", "-q", "-b", "main")
		git(t, dir, "add", ".")
		git(t, dir, "commit", "-q", "-m", "specs")
	}
	repo := spectest.Load(t, dir)
	revs, err := specRevisions(t.Context(), dir, "HEAD", repo)
	if err != nil {
		t.Fatal(err)
	}
	f, err := generate.Render(repo, generate.Options{SpecRevision: revs})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fleet")
	plan, err := fleet.Compute(out, f.Map(), layout.ManagedDirs(&repo.Platform))
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.Apply(out, plan); err != nil {
		t.Fatal(err)
	}
	if commit {
		git(t, dir, "add", ".")
		git(t, dir, "commit", "-q", "-m", "fleet")
	}
	return dir
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

type result struct {
	code        int
	out, stderr string
}

func runVerify(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(t.Context(), args, stdio{out: &out, err: &errb, getenv: func(k string) string { return env[k] }})
	code := cli.Code(err, &errb)
	return result{code, out.String(), errb.String()}
}

func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	clean := appsRepo(t, false)
	edited := appsRepo(t, false)
	deploy := filepath.Join(edited, "fleet/apps/prod-eu/shop/orders/api/deployment-orders-api.yaml")
	data, err := os.ReadFile(deploy)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(deploy, bytes.Replace(data, []byte("replicas: 2"), []byte("replicas: 1"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		code     int
		contains []string // in stdout
		stderr   string   // in stderr
	}{
		{name: "clean", args: []string{"--apps", clean}, code: 0,
			contains: []string{"0 error(s), 7 warning(s): 49 files, 10 Flux Kustomizations, 10 paths built, 47 objects"}},
		{name: "fleet folder after the flags", args: []string{"--apps", clean, filepath.Join(clean, "fleet")}, code: 0,
			contains: []string{"0 error(s), 7 warning(s)"}},
		{name: "hand edit", args: []string{"--apps", edited}, code: 1, contains: []string{
			filepath.ToSlash(deploy) + ":16: differs from what the specs render (edited by hand?); run render",
			"-  replicas: 1\n+  replicas: 2\n",
			"1 error(s), 8 warning(s)", // 1 replica in production: one warning more
		}},
		{name: "hand edit without the apps repository", args: []string{"--platform", filepath.Join(edited, "platform.yaml"), filepath.Join(edited, "fleet")}, code: 0,
			contains: []string{"0 error(s), 8 warning(s)"}},
		{name: "json", args: []string{"--apps", edited, "--format", "json"}, code: 1, contains: []string{`"ok": false`, `"check": "drift"`}},
		{name: "github annotations", args: []string{"--apps", edited}, env: map[string]string{"GITHUB_ACTIONS": "true"}, code: 1, contains: []string{
			"::error file=" + filepath.ToSlash(deploy) + ",line=16,title=verify drift::differs from what the specs render (edited by hand?); run render\n",
		}},
		{name: "bad format", args: []string{"--format", "xml"}, code: 2, stderr: "error: --format must be text or json"},
		{name: "two folders", args: []string{"a", "b"}, code: 2, stderr: "error: verify takes one fleet folder, got 2"},
		{name: "missing folder", args: []string{filepath.Join(clean, "nope")}, code: 2, stderr: "no such file or directory"},
		{name: "apps-ref without apps", args: []string{"--apps-ref", "main"}, code: 2, stderr: "error: --apps-ref needs --apps"},
		{name: "apps-ref outside git", args: []string{"--apps", clean, "--apps-ref", "main"}, code: 2, stderr: "is not inside a Git work tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runVerify(t, tt.env, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.code, r.out, r.stderr)
			}
			for _, s := range tt.contains {
				if !strings.Contains(r.out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.out)
				}
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, r.stderr)
			}
		})
	}
}

// The JSON report is one object with every finding.
func TestVerifyJSON(t *testing.T) {
	t.Parallel()
	dir := appsRepo(t, false)
	if err := os.WriteFile(filepath.Join(dir, "fleet/clusters/prod-eu/token.txt"), []byte("ghp_"+strings.Repeat("x", 36)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runVerify(t, nil, "--apps", dir, "--format", "json")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		OK       bool `json:"ok"`
		Errors   int  `json:"errors"`
		Findings []struct {
			Check, Severity, File, Message string
			Line                           int
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if rep.OK || rep.Errors != 1 {
		t.Errorf("ok=%v errors=%d", rep.OK, rep.Errors)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Check == "secret" {
			found = true
			if f.Line != 1 || !strings.HasSuffix(f.File, "fleet/clusters/prod-eu/token.txt") || strings.Contains(f.Message, "xxxx") {
				t.Errorf("secret finding %+v", f)
			}
		}
	}
	if !found {
		t.Errorf("no secret finding in %s", r.out)
	}
	if strings.Contains(r.out, strings.Repeat("x", 36)) {
		t.Error("the token's value is in the report")
	}
}

// In a Git repository the spec revisions count, and --apps-ref renders the
// specs of a ref rather than of the work tree.
func TestVerifyGit(t *testing.T) {
	t.Parallel()
	dir := appsRepo(t, true)
	if r := runVerify(t, nil, "--apps", dir); r.code != 0 {
		t.Fatalf("fresh fleet: exit %d\n%s%s", r.code, r.out, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "fleet/clusters/prod-eu/apps/shop-orders.yaml"))
	if err != nil || !bytes.Contains(data, []byte("event.toolkit.fluxcd.io/spec-revision: ")) {
		t.Fatalf("no spec revision in the fleet (%v):\n%s", err, data)
	}
	spec := filepath.Join(dir, "apps/shop/orders/app.yaml")
	data, err = os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, bytes.Replace(data, []byte("orders-api:2.4.1"), []byte("orders-api:2.5.0"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runVerify(t, nil, "--apps", dir); r.code != 1 || !strings.Contains(r.out, "+      - image: myorg/orders-api:2.5.0") {
		t.Errorf("work tree: exit %d\n%s%s", r.code, r.out, r.stderr)
	}
	if r := runVerify(t, nil, "--apps", dir, "--apps-ref", "main"); r.code != 0 {
		t.Errorf("--apps-ref main: exit %d\n%s%s", r.code, r.out, r.stderr)
	}
	if r := runVerify(t, nil, "--apps", dir, "--apps-ref", "nope"); r.code != 2 {
		t.Errorf("--apps-ref nope: exit %d\n%s%s", r.code, r.out, r.stderr)
	}
}

// A component folder with patches is built with them, and what a patch
// breaks fails the run at the patch's line, in the text and in the GitHub
// annotation.
func TestVerifyPatch(t *testing.T) {
	t.Parallel()
	dir := appsRepo(t, false)
	kfile := filepath.Join(dir, "fleet/apps/prod-eu/shop/orders/api/kustomization.yaml")
	data, err := os.ReadFile(kfile)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, []byte("patches:\n- patch: \"- op: replace\\n  path: /spec/replicas\\n  value: three\\n\"\n  target:\n    kind: Deployment\n")...)
	if err := os.WriteFile(kfile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(data), "\n") - 2
	r := runVerify(t, map[string]string{"GITHUB_ACTIONS": "true"}, "--platform", filepath.Join(dir, "platform.yaml"), filepath.Join(dir, "fleet"))
	at := filepath.ToSlash(kfile) + ":" + strconv.Itoa(line)
	want := at + ": Deployment/orders-api: spec.replicas: must be an integer, not a string (after this patch)"
	if r.code != 1 || !strings.Contains(r.out, want) || !strings.Contains(r.out, "file="+filepath.ToSlash(kfile)+",line="+strconv.Itoa(line)+",title=verify api::Deployment/orders-api: spec.replicas") {
		t.Errorf("exit %d, want 1 and %q with its annotation:\n%s%s", r.code, want, r.out, r.stderr)
	}
}

// --artifacts looks the artifacts up in their registry, the components'
// and the projects': all there passes; a fleet whose artifacts were never
// pushed fails, naming each one.
func TestVerifyArtifacts(t *testing.T) {
	t.Parallel()
	srv := registrytest.New(t, registrytest.Options{})
	dir := appsRepoWith(t, false, "  artifacts:\n    repository: "+srv.Host()+"/fleet\n")
	if r := runVerify(t, nil, "--apps", dir, "--artifacts"); r.code != 1 || strings.Count(r.out, "spec.ref.digest: the registry has no artifact "+srv.Host()+"/fleet@sha256:") != 12 {
		t.Errorf("nothing pushed: exit %d, want 1 and a finding for each of the 12 artifacts (10 components', 2 projects'):\n%s%s", r.code, r.out, r.stderr)
	}
	repo := spectest.Load(t, dir)
	f, err := generate.Render(repo, generate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := f.Artifacts()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Push(t.Context(), srv.Host()+"/fleet", arts, artifact.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	r := runVerify(t, nil, "--apps", dir, "--artifacts", "--artifacts-concurrency", "3", "--format", "json")
	var rep struct {
		OK    bool `json:"ok"`
		Stats struct {
			Artifacts  int `json:"artifacts"`
			InRegistry int `json:"in_registry"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if r.code != 0 || !rep.OK || rep.Stats.Artifacts != 12 || rep.Stats.InRegistry != 12 {
		t.Errorf("pushed: exit %d, %+v; want 0 with 12 artifacts rebuilt and found\n%s%s", r.code, rep, r.out, r.stderr)
	}
	if r := runVerify(t, nil, "--apps", dir, "--artifacts"); r.code != 0 || !strings.Contains(r.out, ", 12 artifacts rebuilt, 12 in the registry (") {
		t.Errorf("pushed, text: exit %d, want 0 and the artifacts counted in the summary\n%s%s", r.code, r.out, r.stderr)
	}
	// Without the flag, verify asks no registry.
	srv.Reset()
	if r := runVerify(t, nil, "--apps", dir); r.code != 0 || len(srv.Requests()) != 0 {
		t.Errorf("without --artifacts: exit %d, %d registry requests\n%s%s", r.code, len(srv.Requests()), r.out, r.stderr)
	}
	if r := runVerify(t, nil, "--apps", dir, "--artifacts-concurrency", "0"); r.code != 2 {
		t.Errorf("--artifacts-concurrency 0: exit %d, want 2", r.code)
	}
}

// A fleet moving to a source per project passes at each of render's two
// steps (the first says to render again); an app whose Flux objects are in
// both places fails.
func TestVerifyProjectMove(t *testing.T) {
	t.Parallel()
	dir := appsRepo(t, false) // the root Kustomization applies the app files
	p := filepath.Join(dir, "platform.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Replace(data, []byte("\nfleet:\n"), []byte("\nfleet:\n  artifacts:\n    repository: ghcr.io/myorg/fleet\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := spectest.Load(t, dir)
	out := filepath.Join(dir, "fleet")
	renderAgain := func() {
		t.Helper()
		f, err := generate.Render(repo, generate.Options{Previous: func(q string) ([]byte, bool) {
			b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(q)))
			return b, err == nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := fleet.Compute(out, f.Map(), layout.ManagedDirs(&repo.Platform))
		if err != nil {
			t.Fatal(err)
		}
		if err := fleet.Apply(out, plan); err != nil {
			t.Fatal(err)
		}
	}
	const again = "render again once Flux applied it to finish the move"
	renderAgain()
	if r := runVerify(t, nil, "--apps", dir); r.code != 0 || strings.Count(r.out, again) != 6 || strings.Contains(r.out, ": drift") {
		t.Errorf("first step: exit %d, want 0 and an info on each of the 6 apps:\n%s%s", r.code, r.out, r.stderr)
	}
	renderAgain()
	if r := runVerify(t, nil, "--apps", dir); r.code != 0 || strings.Contains(r.out, again) {
		t.Errorf("second step: exit %d, want 0 and no info on the move:\n%s%s", r.code, r.out, r.stderr)
	}
	moved, err := os.ReadFile(filepath.Join(out, "apps/prod-eu/shop/_flux/orders.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "clusters/prod-eu/apps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "clusters/prod-eu/apps/shop-orders.yaml"), moved, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runVerify(t, nil, "--platform", p, out)
	want := filepath.ToSlash(out) + "/clusters/prod-eu/apps/shop-orders.yaml:2: app prod-eu/shop/orders has its Flux objects both here"
	if r.code != 1 || !strings.Contains(r.out, want) {
		t.Errorf("both places: exit %d, want 1 and %q:\n%s%s", r.code, want, r.out, r.stderr)
	}
}
