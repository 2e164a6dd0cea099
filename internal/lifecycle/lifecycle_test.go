package lifecycle_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
	"github.com/fleetwright/fleetwright/internal/specedit"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/template"
)

// copyRepo copies testdata/repo into a temporary folder.
func copyRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	golden.WriteFiles(t, root, golden.ReadFiles(t, filepath.Join("testdata", "repo")))
	return root
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.File(t, filepath.Join("testdata", name), got)
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

// validate fails the test when the specs under root are invalid.
func validate(t *testing.T, root string) {
	t.Helper()
	l := spectest.Loader(t)
	if _, ps := l.Load(os.DirFS(root)); ps.HasErrors() {
		t.Errorf("the edited repository is invalid:\n%v", ps)
	}
}

// edit is one lifecycle verb with its arguments.
type edit func(context.Context, lifecycle.Options) (*lifecycle.Change, error)

func pause(app string) edit {
	return func(ctx context.Context, o lifecycle.Options) (*lifecycle.Change, error) {
		o.App = app
		return lifecycle.Pause(ctx, o)
	}
}

func resume(app string) edit {
	return func(ctx context.Context, o lifecycle.Options) (*lifecycle.Change, error) {
		o.App = app
		return lifecycle.Resume(ctx, o)
	}
}

func scale(app, comp string, replicas int) edit {
	return scaleTo(app, lifecycle.Scaling{Component: comp, Replicas: &replicas})
}

func scaleBounds(app, comp string, min, max int) edit {
	s := lifecycle.Scaling{Component: comp}
	if min >= 0 {
		s.Min = &min
	}
	if max >= 0 {
		s.Max = &max
	}
	return scaleTo(app, s)
}

func scaleTo(app string, s lifecycle.Scaling) edit {
	return func(ctx context.Context, o lifecycle.Options) (*lifecycle.Change, error) {
		o.App = app
		return lifecycle.Scale(ctx, o, s)
	}
}

func newApp(n lifecycle.NewApp) edit {
	return func(ctx context.Context, o lifecycle.Options) (*lifecycle.Change, error) {
		return lifecycle.New(ctx, o, n)
	}
}

func del(app string) edit {
	return func(ctx context.Context, o lifecycle.Options) (*lifecycle.Change, error) {
		o.App = app
		return lifecycle.Delete(ctx, o)
	}
}

func capture(app string, c lifecycle.Capture, params ...string) edit {
	return func(ctx context.Context, o lifecycle.Options) (*lifecycle.Change, error) {
		o.App = app
		for _, kv := range params {
			key, p, _ := strings.Cut(kv, "=")
			jp, err := specedit.ParsePath(p)
			if err != nil {
				return nil, err
			}
			c.Params = append(c.Params, template.CaptureParam{Name: key, Path: jp})
		}
		ch, _, err := lifecycle.CaptureTemplate(ctx, o, c)
		return ch, err
	}
}

// run makes the edit in the repository at root and writes it there.
func run(t *testing.T, root string, e edit) *lifecycle.Change {
	t.Helper()
	ctx := context.Background()
	o := lifecycle.Options{Repo: root}
	ch, err := e(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lifecycle.Apply(ctx, o, ch, lifecycle.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	return ch
}

func intp(n int) *int { return &n }

// TestEditGolden runs each edit on the commented YAML spec and on the JSON
// spec and compares the whole change to the repository, as a diff, with a
// golden file: only the intended lines may change.
func TestEditGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before []edit // run first, not part of the diff
		edit   edit
		done   string // ROOT stands for the repository
	}{
		{name: "pause-yaml", edit: pause("shop/api"), done: "paused shop/api (ROOT/apps/shop/api/app.yaml)"},
		{name: "pause-json", edit: pause("web"), done: "paused shop/web (ROOT/apps/shop/web/app.json)"},
		{name: "resume-yaml", before: []edit{pause("api")}, edit: resume("api"), done: "resumed shop/api (ROOT/apps/shop/api/app.yaml)"},
		{name: "resume-json", before: []edit{pause("web")}, edit: resume("web"), done: "resumed shop/web (ROOT/apps/shop/web/app.json)"},
		{name: "scale-yaml", edit: scale("api", "server", 4), done: "scaled shop/api server to 4 replicas (ROOT/apps/shop/api/app.yaml)"},
		{name: "scale-yaml-new-key", edit: scale("api", "worker", 3), done: "scaled shop/api worker to 3 replicas (ROOT/apps/shop/api/app.yaml)"},
		{name: "scale-bounds-yaml", edit: scaleBounds("api", "server", 3, 20), done: "scaled shop/api server autoscaling to min 3, max 20 replicas (ROOT/apps/shop/api/app.yaml)"},
		{name: "scale-bounds-yaml-new-map", edit: scaleBounds("api", "worker", 1, 4), done: "scaled shop/api worker autoscaling to min 1, max 4 replicas (ROOT/apps/shop/api/app.yaml)"},
		{name: "scale-json", edit: scale("web", "frontend", 5), done: "scaled shop/web frontend to 5 replicas (ROOT/apps/shop/web/app.json)"},
		{name: "scale-bounds-json", edit: scaleBounds("web", "frontend", 2, 6), done: "scaled shop/web frontend autoscaling to min 2, max 6 replicas (ROOT/apps/shop/web/app.json)"},
		{name: "scale-template-parameter", edit: scale("jobs", "worker", 3), done: "scaled shop/jobs worker to 3 replicas (ROOT/apps/shop/jobs/app.yaml)"},
		{name: "new-yaml", edit: newApp(lifecycle.NewApp{Name: "blog", Project: "shop", Image: "nginx:1.27", Port: 80, Replicas: intp(2), Host: "blog.example.com"}), done: "created ROOT/apps/shop/blog/app.yaml"},
		{name: "new-json", edit: newApp(lifecycle.NewApp{JSON: true, Name: "status", Project: "shop", Dockerfile: "Dockerfile", Port: 8080}), done: "created ROOT/apps/shop/status/app.json"},
		{name: "delete", edit: del("reports"), done: "deleted shop/reports (ROOT/apps/shop/reports/)"},
		{name: "capture-yaml", edit: capture("api", lifecycle.Capture{Name: "api-stack", Version: "1.0.0"},
			"image=components[server].workload_spec.image", "replicas=components[server].workload_spec.replicas", "host=components[server].workload_spec.ingress.host"),
			done: "wrote ROOT/templates/api-stack/template.yaml with 3 parameter(s)"},
		{name: "capture-json", edit: capture("shop/web", lifecycle.Capture{Name: "web-stack", Version: "0.1.0"}, "replicas=$.components[frontend].workload_spec.replicas"),
			done: "wrote ROOT/templates/web-stack/template.json with 1 parameter(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyRepo(t)
			for _, b := range tt.before {
				run(t, root, b)
			}
			before := golden.ReadFiles(t, root)
			ch := run(t, root, tt.edit)
			if want := strings.ReplaceAll(tt.done, "ROOT", root); ch.Done != want {
				t.Errorf("Done %q, want %q", ch.Done, want)
			}
			compareGolden(t, tt.name+".diff", repoDiff(before, golden.ReadFiles(t, root)))
			validate(t, root)
		})
	}
}

// TestPauseResumeRestores checks that resuming after pausing gives back
// the file byte for byte.
func TestPauseResumeRestores(t *testing.T) {
	t.Parallel()
	root := copyRepo(t)
	before := golden.ReadFiles(t, root)
	for _, e := range []edit{pause("api"), pause("web"), resume("api"), resume("web")} {
		run(t, root, e)
	}
	if d := repoDiff(before, golden.ReadFiles(t, root)); d != "" {
		t.Errorf("pause then resume changed the repository:\n%s", d)
	}
	ch, err := resume("api")(context.Background(), lifecycle.Options{Repo: root})
	if err != nil || !ch.Empty() || ch.Done != "shop/api is already running (not paused); nothing to do" {
		t.Errorf("resume of a running app = %+v, %v", ch, err)
	}
}

// TestNothingToDo checks that edits the spec already holds give an empty
// change that says so.
func TestNothingToDo(t *testing.T) {
	t.Parallel()
	root := copyRepo(t)
	run(t, root, pause("api"))
	before := golden.ReadFiles(t, root)
	for _, tt := range []struct {
		edit edit
		done string
	}{
		{pause("api"), "shop/api is already paused; nothing to do"},
		{scale("api", "server", 2), "shop/api server is already scaled to 2 replicas; nothing to do"},
	} {
		ch := run(t, root, tt.edit)
		if !ch.Empty() || ch.Done != tt.done || ch.Diff() != "" {
			t.Errorf("change %+v, want an empty one saying %q", ch, tt.done)
		}
	}
	if d := repoDiff(before, golden.ReadFiles(t, root)); d != "" {
		t.Errorf("an empty change wrote:\n%s", d)
	}
}

// TestRefusedChanges runs edits that are invalid or name what is not
// there and checks the error and that the repository is as it was.
func TestRefusedChanges(t *testing.T) {
	t.Parallel()
	const (
		invalid = "invalid"
		inUse   = "in use"
		refused = "refused"
	)
	tests := []struct {
		name string
		edit edit
		kind string // of error; "" for an error in the request
		want string // in the error, or in its problems
	}{
		{"too many replicas", scale("api", "server", 5000), invalid, "apps/shop/api/app.yaml:21:17: components[1].workload_spec.replicas: must be ≤ 1000; got 5000"},
		{"min above max", scaleBounds("web", "frontend", 9, 3), invalid, "min_replicas (9) is greater than max_replicas (3)"},
		{"autoscaling without max", scaleBounds("api", "worker", 2, -1), invalid, `missing required field "max_replicas"`},
		{"bad app name", newApp(lifecycle.NewApp{Name: "Blog", Project: "shop", Image: "nginx:1.27"}), invalid, "apps/shop/Blog/app.yaml:2:7: name: app name \"Blog\" must consist of lowercase letters"},
		{"delete with users", del("api"), inUse, "apps/shop/web/app.json:13:45: components[0].workload_spec.env[0].export_ref: API_URL of shop/web (server.url)"},
		{"unknown app", pause("apy"), refused, `no app "apy" in `},
		{"unknown component", scale("api", "cache", 2), refused, `shop/api has no component "cache"; its workloads: server, worker`},
		{"addon", scale("api", "db", 2), refused, `component "db" is an addon`},
		{"template value not a parameter", scaleBounds("jobs", "worker", 1, 2), refused, "is not a parameter"},
		{"existing app", newApp(lifecycle.NewApp{Name: "api", Project: "shop", Image: "x"}), refused, "already exists"},
		{"capture of a template app", capture("jobs", lifecycle.Capture{Name: "x"}), refused, "already uses template worker"},
		{"existing template", capture("api", lifecycle.Capture{Name: "worker"}), refused, "templates/worker/template.yaml already exists; pass --force to replace it"},
		{"malformed app", pause("a//b"), "", `"a//b" is not an app`},
		{"replicas and bounds", scaleTo("api", lifecycle.Scaling{Component: "server", Replicas: intp(1), Max: intp(2)}), "", "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyRepo(t)
			before := golden.ReadFiles(t, root)
			ch, err := tt.edit(context.Background(), lifecycle.Options{Repo: root})
			if err == nil {
				t.Fatalf("no error; change %+v", ch)
			}
			var (
				msg   = err.Error()
				inv   *lifecycle.InvalidError
				use   *lifecycle.InUseError
				refus *lifecycle.RefusedError
			)
			switch tt.kind {
			case invalid:
				if !errors.As(err, &inv) {
					t.Fatalf("error %v is not an InvalidError", err)
				}
				msg = inv.Problems.Error()
			case inUse:
				if !errors.As(err, &use) || use.App != "shop/api" {
					t.Fatalf("error %v is not an InUseError of shop/api", err)
				}
				msg = strings.Join(use.Users, "\n")
			case refused:
				if !errors.As(err, &refus) {
					t.Fatalf("error %v is not a RefusedError", err)
				}
			default:
				if errors.As(err, &refus) || errors.As(err, &inv) || errors.As(err, &use) {
					t.Errorf("error %v is a refusal, want an error in the request", err)
				}
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error does not say %q:\n%s", tt.want, msg)
			}
			if d := repoDiff(before, golden.ReadFiles(t, root)); d != "" {
				t.Errorf("a refused change wrote:\n%s", d)
			}
		})
	}
}

func TestNewSchemaReference(t *testing.T) {
	t.Parallel()
	// Inside a checkout that has schema/, a new spec points at it by
	// relative path.
	top := t.TempDir()
	golden.WriteFiles(t, top, map[string]string{"schema/app.schema.json": "{}", "examples/platform.yaml": "apps_domain: example.com\n"})
	ch := run(t, filepath.Join(top, "examples"), newApp(lifecycle.NewApp{Name: "hello", Project: "demo", Image: "nginx:1.27"}))
	b, err := os.ReadFile(filepath.Join(top, "examples/apps/demo/hello/app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "# yaml-language-server: $schema=../../../../schema/app.schema.json\n"; !strings.HasPrefix(string(b), want) {
		t.Errorf("first line of %s, want %q", b, want)
	}
	if ch.Subject != "new app demo/hello" || ch.Message() != "new app demo/hello\n\nAdds apps/demo/hello/app.yaml." {
		t.Errorf("commit message %q", ch.Message())
	}
}

// TestNewProject checks that New takes the only project there is.
func TestNewProject(t *testing.T) {
	t.Parallel()
	root := copyRepo(t)
	ch := run(t, root, newApp(lifecycle.NewApp{Name: "blog", Image: "nginx:1.27", Component: "site"}))
	if got := golden.ReadFiles(t, root)["apps/shop/blog/app.yaml"]; !strings.Contains(got, "  - name: site\n") {
		t.Errorf("apps/shop/blog/app.yaml:\n%s", got)
	}
	if ch.Subject != "new app shop/blog" {
		t.Errorf("subject %q", ch.Subject)
	}
	golden.WriteFiles(t, root, map[string]string{"apps/other/x/app.yaml": "name: x\ncomponents: []\n"})
	if _, err := newApp(lifecycle.NewApp{Name: "blog2", Image: "nginx:1.27"})(context.Background(), lifecycle.Options{Repo: root}); err == nil || !strings.Contains(err.Error(), "has 2 projects") {
		t.Errorf("two projects: %v", err)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	root := copyRepo(t)
	before := golden.ReadFiles(t, root)
	ch, err := scale("api", "server", 4)(context.Background(), lifecycle.Options{Repo: root})
	if err != nil {
		t.Fatal(err)
	}
	want := "-      replicas: 2                # enough for now\n+      replicas: 4                # enough for now\n"
	if !strings.Contains(ch.Diff(), want) {
		t.Errorf("diff:\n%s\nwant it to hold:\n%s", ch.Diff(), want)
	}
	del, err := del("reports")(context.Background(), lifecycle.Options{Repo: root})
	if err != nil {
		t.Fatal(err)
	}
	// The diff of a change is what applying it does.
	compareGolden(t, "delete.diff", del.Diff())
	if d := repoDiff(before, golden.ReadFiles(t, root)); d != "" {
		t.Errorf("a change that was not applied wrote:\n%s", d)
	}
}
