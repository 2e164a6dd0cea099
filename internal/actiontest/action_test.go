package actiontest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fleetwright/fleetwright/internal/github/githubtest"
)

type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID   string            `yaml:"id"`
			Name string            `yaml:"name"`
			If   string            `yaml:"if"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

var (
	expr = regexp.MustCompile(`\$\{\{\s*([^}]+?)\s*\}\}`)
	// The conditions action.yml uses: steps.ID.outputs.NAME == 'VALUE' (or !=).
	condition = regexp.MustCompile(`^(steps\.[A-Za-z0-9_-]+\.outputs\.[A-Za-z0-9_-]+) (==|!=) '([^']*)'$`)
)

type runner struct {
	t        testing.TB
	root     string // the action's checkout
	temp     string // RUNNER_TEMP
	tools    string // RUNNER_TOOL_CACHE, kept across the runner's runs
	act      action
	extraEnv map[string]string
	// path, when set, is the steps' PATH instead of the test's.
	path string
	// actionRef and actionRepo are github.action_ref and
	// github.action_repository: the ref in uses: OWNER/NAME@REF.
	actionRef, actionRepo string
}

func newRunner(t testing.TB) *runner {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q", a.Runs.Using)
	}
	return &runner{t: t, root: root, temp: t.TempDir(), tools: t.TempDir(), act: a, extraEnv: map[string]string{}}
}

type run struct {
	code    int
	stdout  string
	outputs map[string]string // the action's outputs that have a value
	summary string
	// ran names the steps that ran (their id, else name, else uses), in
	// order; a uses: step is only recorded, Go is already here.
	ran []string
	// took is how long each step that ran took, by the same names.
	took map[string]time.Duration
	// steps holds the outputs of the steps with an id.
	steps map[string]map[string]string
}

// run executes every run step with the given inputs; it stops at the first
// failing step, as a runner does.
func (r *runner) run(inputs map[string]string) run {
	r.t.Helper()
	return r.runSteps(inputs, "")
}

// runStep executes only the run step with the given id, for tests that put
// fake programs in RUNNER_TEMP instead of building the real ones.
func (r *runner) runStep(id string, inputs map[string]string) run {
	r.t.Helper()
	return r.runSteps(inputs, id)
}

func (r *runner) runSteps(inputs map[string]string, only string) run {
	t := r.t
	t.Helper()
	files := t.TempDir()
	summary := filepath.Join(files, "summary")
	pathFile := filepath.Join(files, "path")
	for _, f := range []string{summary, pathFile} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stepOutputs := map[string]map[string]string{}
	value := func(e string) string {
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			if v, ok := inputs[name]; ok {
				return v
			}
			in, ok := r.act.Inputs[name]
			if !ok {
				t.Fatalf("action.yml uses undeclared input %q", name)
			}
			if strings.Contains(in.Default, "github.token") {
				return inputs["github.token"]
			}
			return in.Default
		case strings.HasPrefix(e, "steps."):
			parts := strings.Split(e, ".")
			if len(parts) != 4 || parts[2] != "outputs" {
				t.Fatalf("unknown expression %q", e)
			}
			return stepOutputs[parts[1]][parts[3]]
		case e == "github.token":
			return inputs["github.token"]
		case e == "github.action_path":
			return r.root
		case e == "github.action_ref":
			return r.actionRef
		case e == "github.action_repository":
			return r.actionRepo
		}
		t.Fatalf("unknown expression %q", e)
		return ""
	}
	eval := func(s string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string { return value(expr.FindStringSubmatch(m)[1]) })
	}
	path := r.path
	if path == "" {
		path = os.Getenv("PATH")
	}
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	var stdout bytes.Buffer
	res := run{took: map[string]time.Duration{}}
	for i, step := range r.act.Runs.Steps {
		if only != "" && step.ID != only {
			continue
		}
		if step.If != "" {
			m := condition.FindStringSubmatch(strings.TrimSpace(step.If))
			if m == nil {
				t.Fatalf("step %d: condition %q is not of the form the test runner knows", i, step.If)
			}
			if (value(m[1]) == m[3]) != (m[2] == "==") {
				continue
			}
		}
		name := cmp.Or(step.ID, step.Name, step.Uses)
		res.ran = append(res.ran, name)
		if step.Run == "" {
			continue // a uses: step (setup-go); Go is already here
		}
		outFile := filepath.Join(files, fmt.Sprintf("output-%d", i))
		if err := os.WriteFile(outFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{
			"PATH=" + path, "HOME=" + os.Getenv("HOME"), "GOCACHE=" + goEnv(t, "GOCACHE"),
			"GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOFLAGS=" + os.Getenv("GOFLAGS"), "GOTOOLCHAIN=local",
			"GITHUB_ACTIONS=true", "GITHUB_ACTION_PATH=" + r.root, "RUNNER_TEMP=" + r.temp,
			"RUNNER_TOOL_CACHE=" + r.tools, "RUNNER_OS=" + map[string]string{"linux": "Linux", "darwin": "macOS"}[runtime.GOOS],
			"RUNNER_ARCH=" + arch, "GITHUB_OUTPUT=" + outFile, "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_PATH=" + pathFile,
		}
		for k, v := range r.extraEnv {
			env = append(env, k+"="+v)
		}
		for k, v := range step.Env {
			env = append(env, k+"="+eval(v))
		}
		cmd := exec.Command("bash", "-e", "-c", step.Run)
		cmd.Env = env
		cmd.Dir = r.temp
		cmd.Stdout = &stdout
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		res.took[name] = time.Since(start)
		out, _ := os.ReadFile(outFile)
		if step.ID != "" {
			stepOutputs[step.ID] = parseOutputs(string(out))
		}
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			res.code = ee.ExitCode()
			t.Logf("step %s failed (%d):\n%s", name, res.code, stderr.String())
			break
		}
	}
	res.outputs = map[string]string{}
	for name, o := range r.act.Outputs {
		if v := eval(o.Value); v != "" {
			res.outputs[name] = v
		}
	}
	sum, _ := os.ReadFile(summary)
	res.stdout, res.summary, res.steps = stdout.String(), string(sum), stepOutputs
	return res
}

func goEnv(t testing.TB, key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// parseOutputs reads GITHUB_OUTPUT's name<<DELIM ... DELIM blocks.
func parseOutputs(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			if k, v, ok := strings.Cut(lines[i], "="); ok {
				out[k] = v
			}
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAction runs the action's steps for render, validate and review, as
// the example workflows use it.
func TestAction(t *testing.T) {
	r := newRunner(t)
	apps := t.TempDir()
	copyDir(t, "../../examples", apps)

	t.Run("render", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "fleet")
		res := r.run(map[string]string{"command": "render", "path": apps, "out": out, "offline": "true"})
		if res.code != 0 {
			t.Fatalf("exit %d", res.code)
		}
		want := "prod-eu/my-project/my-api,prod-eu/shop/analytics,prod-eu/shop/my-api,prod-eu/shop/orders,prod-eu/shop/reports,prod-eu/shop/storefront"
		if got := res.outputs["changed-apps"]; got != want {
			t.Errorf("changed-apps = %q, want %q", got, want)
		}
		if _, err := os.Stat(filepath.Join(out, "clusters/prod-eu/apps/shop-my-api.yaml")); err != nil {
			t.Error(err)
		}
	})

	t.Run("validate", func(t *testing.T) {
		bad := t.TempDir()
		if err := os.MkdirAll(filepath.Join(bad, "apps/shop/api"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, "apps/shop/api/app.yaml"), []byte("name: api\ncomponents: [{name: web, type: workload, workload_spec: {image: nginx:1.27, port: 0}}]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res := r.run(map[string]string{"command": "validate", "path": bad})
		if res.code != 1 || !strings.Contains(res.stdout, "::error col=") || !strings.Contains(res.stdout, "must be ≥ 1; got 0") {
			t.Errorf("exit %d, stdout:\n%s", res.code, res.stdout)
		}
	})

	t.Run("review", func(t *testing.T) {
		dir := t.TempDir()
		git := func(args ...string) string {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		git("init", "-q", "-b", "main")
		copyDir(t, "../../examples", dir)
		git("add", "-A")
		git("commit", "-q", "-m", "base")
		base := git("rev-parse", "HEAD")
		p := filepath.Join(dir, "apps/shop/orders/app.yaml")
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, bytes.Replace(b, []byte("orders-api:2.4.1"), []byte("orders-api:2.5.0"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		git("commit", "-q", "-am", "bump orders")
		head := git("rev-parse", "HEAD")

		api := githubtest.New(t, githubtest.WithToken("ghs_action"))
		pr := api.AddPullRequest("acme/apps", githubtest.PullRequest{Head: "bump", Base: "main", Title: "bump"})
		ev, _ := json.Marshal(map[string]any{"pull_request": map[string]any{"number": pr, "base": map[string]any{"sha": base}, "head": map[string]any{"sha": head}}})
		evPath := filepath.Join(t.TempDir(), "event.json")
		if err := os.WriteFile(evPath, ev, 0o644); err != nil {
			t.Fatal(err)
		}
		api.Expect("GET", "/repos/acme/apps/issues/1/comments")
		api.Expect("POST", "/repos/acme/apps/issues/1/comments")
		r.extraEnv = map[string]string{"GITHUB_EVENT_PATH": evPath, "GITHUB_REPOSITORY": "acme/apps", "GITHUB_API_URL": api.URL}
		defer func() { r.extraEnv = map[string]string{} }()
		res := r.run(map[string]string{"command": "review", "path": dir, "github.token": "ghs_action"})
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stdout)
		}
		if !strings.Contains(res.stdout, "::add-mask::ghs_action") {
			t.Error("the token was not masked")
		}
		if res.outputs["changed-apps"] != "prod-eu/shop/orders" || res.outputs["comment-url"] == "" {
			t.Errorf("outputs: %v", res.outputs)
		}
		diff, err := os.ReadFile(res.outputs["diff-file"])
		if err != nil || !strings.Contains(string(diff), "+      - image: myorg/orders-api:2.5.0") {
			t.Errorf("diff file: %v\n%s", err, diff)
		}
		if !strings.Contains(res.summary, "`myorg/orders-api:2.4.1` | `myorg/orders-api:2.5.0`") {
			t.Errorf("summary:\n%s", res.summary)
		}
		if c := api.Comments("acme/apps", pr); len(c) != 1 {
			t.Errorf("%d comments", len(c))
		}
	})
}
