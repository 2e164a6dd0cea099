package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/specedit"
	"github.com/fleetwright/fleetwright/internal/template"
	"github.com/fleetwright/fleetwright/schema"
)

// pausedAfter lists the keys a new paused field goes after, first found wins.
func pausedAfter() []string {
	return []string{"timeout", "cluster", "project_id", "project", "name"}
}

// Pause sets paused: true in the app's spec: its workloads render with 0
// replicas and no autoscaler, and its addons keep running.
func Pause(ctx context.Context, o Options) (*Change, error) { return setPaused(o, true) }

// Resume removes paused from the app's spec.
func Resume(ctx context.Context, o Options) (*Change, error) { return setPaused(o, false) }

func setPaused(o Options, pause bool) (*Change, error) {
	w, a, err := openApp(o)
	if err != nil {
		return nil, err
	}
	if a.Spec.Paused == pause {
		return nothing("%s is already %s; nothing to do", a.Ref(), map[bool]string{true: "paused", false: "running (not paused)"}[pause]), nil
	}
	d, err := w.editDoc(a)
	if err != nil {
		return nil, err
	}
	ch := &Change{}
	if pause {
		_, err = d.Set(specedit.Path{"paused"}, true, pausedAfter()...)
		ch.Subject = "pause " + a.Ref()
		ch.Body = fmt.Sprintf("Sets paused: true in %s. Its workloads render with 0 replicas and no autoscaler; the spec keeps their counts, and addons keep running.", a.File)
		ch.Done = fmt.Sprintf("paused %s (%s)", a.Ref(), w.display(a.File))
	} else {
		_, err = d.Delete(specedit.Path{"paused"})
		ch.Subject = "resume " + a.Ref()
		ch.Body = fmt.Sprintf("Removes paused from %s. Its workloads render with their replica counts and autoscalers again.", a.File)
		ch.Done = fmt.Sprintf("resumed %s (%s)", a.Ref(), w.display(a.File))
	}
	if err != nil {
		return nil, refused(err)
	}
	ch.Write = map[string][]byte{a.File: d.Bytes()}
	return w.done(ch)
}

// Scaling is what Scale changes: Replicas, or the autoscaling bounds Min
// and Max (one or both).
type Scaling struct {
	Component string
	Replicas  *int
	Min, Max  *int
}

// setOp sets one value below a component's workload_spec.
type setOp struct {
	path  []any
	value int
	after []string // keys the value goes after when it is new
}

// ops are the values s sets and its description, as "to 4 replicas".
func (s Scaling) ops() ([]setOp, string, error) {
	bounds := s.Min != nil || s.Max != nil
	if (s.Replicas != nil) == bounds {
		return nil, "", errors.New("scale sets replicas, or autoscaling bounds, not both")
	}
	if s.Replicas != nil {
		n := *s.Replicas
		return []setOp{{[]any{"replicas"}, n, []string{"replicas", "image", "build", "build_mode"}}}, fmt.Sprintf("to %d replicas", n), nil
	}
	var ops []setOp
	var parts []string
	if s.Min != nil {
		ops = append(ops, setOp{[]any{"autoscaling", "min_replicas"}, *s.Min, []string{"min_replicas", "replicas", "port", "image"}})
		parts = append(parts, fmt.Sprintf("min %d", *s.Min))
	}
	if s.Max != nil {
		ops = append(ops, setOp{[]any{"autoscaling", "max_replicas"}, *s.Max, []string{"max_replicas", "min_replicas", "replicas", "port", "image"}})
		parts = append(parts, fmt.Sprintf("max %d", *s.Max))
	}
	return ops, "autoscaling to " + strings.Join(parts, ", ") + " replicas", nil
}

// Scale sets a workload's replicas or autoscaling bounds. A component
// that comes from a template is scaled through the app's template
// parameter that the value is made of.
func Scale(ctx context.Context, o Options, s Scaling) (*Change, error) {
	ops, what, err := s.ops()
	if err != nil {
		return nil, err
	}
	w, a, err := openApp(o)
	if err != nil {
		return nil, err
	}
	comp := s.Component
	c := a.Component(comp)
	if c == nil || c.Type != spec.TypeWorkload {
		return nil, notWorkload(a, c, comp)
	}
	if s.Replicas != nil && c.WorkloadSpec != nil && c.WorkloadSpec.Autoscaling != nil {
		o.logger().Warn(fmt.Sprintf("%s %s autoscales; replicas counts only while the app is paused (use --min/--max for the autoscaler)", a.Ref(), comp))
	}
	d, err := w.editDoc(a)
	if err != nil {
		return nil, err
	}
	var t *template.Template
	if a.Spec.Template != nil {
		if t, err = w.template(a.Spec.Template.Name); err != nil {
			return nil, err
		}
	}
	changed := false
	for _, op := range ops {
		p := append(specedit.Path{"components", specedit.ByName(comp), "workload_spec"}, op.path...)
		if t != nil {
			param, ok := t.ParamAt(append([]any{comp, "workload_spec"}, op.path...))
			if !ok {
				return nil, refuse("%s takes %s from template %s, where %s.workload_spec.%s is not a parameter; make it one in %s, or change it there",
					a.Ref(), comp, t.Name, comp, specedit.Path(op.path), t.File)
			}
			p = specedit.Path{"template", "parameters", param}
		}
		ch, err := d.Set(p, op.value, op.after...)
		if err != nil {
			return nil, refused(err)
		}
		changed = changed || ch
	}
	if !changed {
		return nothing("%s %s is already scaled %s; nothing to do", a.Ref(), comp, what), nil
	}
	ch := &Change{
		Write:   map[string][]byte{a.File: d.Bytes()},
		Subject: fmt.Sprintf("scale %s %s %s", a.Ref(), comp, what),
		Done:    fmt.Sprintf("scaled %s %s %s (%s)", a.Ref(), comp, what, w.display(a.File)),
	}
	return w.done(ch)
}

// notWorkload says that the app a has no workload comp (c is the
// component of that name, if any) and lists its workloads.
func notWorkload(a *load.LoadedApp, c *spec.Component, comp string) error {
	var names []string
	for _, x := range a.Spec.Components {
		if x.Type == spec.TypeWorkload {
			names = append(names, x.Name)
		}
	}
	kind := "no component " + strconv.Quote(comp) + ";"
	if c != nil {
		kind = "component " + strconv.Quote(comp) + " is an addon, not a workload;"
	}
	return refuse("%s has %s its workloads: %s", a.Ref(), kind, strings.Join(names, ", "))
}

// Delete removes the app's folder; render then deletes its fleet files.
// It refuses while other apps take the app's exports (an *InUseError).
func Delete(ctx context.Context, o Options) (*Change, error) {
	w, a, err := openApp(o)
	if err != nil {
		return nil, err
	}
	dir := path.Dir(a.File)
	if strings.Count(dir, "/") < 2 {
		return nil, refuse("%s is not in a folder of its own (apps/<project>/<app>/); delete it by hand", w.display(a.File))
	}
	for p := range w.files {
		if p != a.File && under(p, dir) {
			return nil, refuse("%s also holds %s; delete by hand what should go", w.display(dir), w.display(p))
		}
	}
	if users := w.exportUsers(a); len(users) > 0 {
		return nil, &InUseError{App: a.Ref(), Users: users}
	}
	ch := &Change{
		Remove:  []string{dir},
		Subject: "delete " + a.Ref(),
		Body:    fmt.Sprintf("Removes %s/. render then deletes the app's fleet files, and Flux prunes its objects from the cluster.", dir),
		Done:    fmt.Sprintf("deleted %s (%s/)", a.Ref(), w.display(dir)),
	}
	return w.done(ch)
}

// exportUsers lists, as file:line:col lines, the env vars of other apps
// that take an export of a.
func (w *workspace) exportUsers(a *load.LoadedApp) []string {
	var out []string
	for _, b := range w.repo.Apps {
		if b == a || b.Cluster != a.Cluster || b.Project != a.Project {
			continue
		}
		for i, c := range b.Spec.Components {
			if c.WorkloadSpec == nil {
				continue
			}
			for j, e := range c.WorkloadSpec.Env {
				if e.ExportRef == nil || e.ExportRef.App != a.Spec.Name {
					continue
				}
				at := load.Path{"components", i, "workload_spec", "env", j, "export_ref"}
				pos := b.Doc.Pos(at)
				out = append(out, fmt.Sprintf("%s:%d:%d: %s: %s of %s (%s.%s)", b.Doc.File, pos.Line, pos.Col, at, e.Name, b.Ref(), e.ExportRef.Component, e.ExportRef.ExportKey))
			}
		}
	}
	slices.Sort(out)
	return out
}

// NewApp describes an app New adds: one workload that runs Image or is
// built from Dockerfile.
type NewApp struct {
	Name string
	// Project defaults to the only project under apps/.
	Project string
	// Component names the workload (default "web").
	Component  string
	Image      string
	Dockerfile string // relative to the app's folder
	Port       int
	Replicas   *int
	// Ingress exposes the workload over HTTPS; a Host implies it.
	Ingress bool
	Host    string
	// JSON writes app.json instead of app.yaml.
	JSON bool
}

// New adds apps/PROJECT/NAME/app.yaml (or app.json).
func New(ctx context.Context, o Options, n NewApp) (*Change, error) {
	w, err := openWorkspace(o.repo())
	if err != nil {
		return nil, err
	}
	if n.Project == "" {
		entries, _ := os.ReadDir(filepath.Join(w.abs, "apps"))
		var projects []string
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				projects = append(projects, e.Name())
			}
		}
		if len(projects) != 1 {
			return nil, fmt.Errorf("give --project (the apps repository has %d projects)", len(projects))
		}
		n.Project = projects[0]
	}
	dir := path.Join("apps", n.Project, n.Name)
	for _, f := range load.SpecFileNames {
		if w.exists(path.Join(dir, f)) {
			return nil, refuse("%s already exists", w.display(path.Join(dir, f)))
		}
	}
	file, content, err := n.spec(filepath.Join(w.abs, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	file = path.Join(dir, file)
	ch := &Change{
		Write:   map[string][]byte{file: content},
		Subject: fmt.Sprintf("new app %s/%s", n.Project, n.Name),
		Body:    fmt.Sprintf("Adds %s.", file),
		Done:    "created " + w.display(file),
	}
	return w.done(ch)
}

// spec is the new app's spec file, named as in its folder dir.
func (n NewApp) spec(dir string) (name string, content []byte, err error) {
	ws := spec.WorkloadSpec{Image: n.Image, Port: n.Port}
	if n.Image != "" {
		ws.BuildMode = spec.BuildModeImage
	} else {
		ws.BuildMode = spec.BuildModeDockerfile
		ws.Build = &spec.BuildSpec{Dockerfile: n.Dockerfile}
	}
	if n.Replicas != nil {
		r := int32(*n.Replicas)
		ws.Replicas = &r
	}
	if n.Ingress || n.Host != "" {
		ws.Ingress = &spec.Ingress{Enabled: true, Host: n.Host}
	}
	comp := n.Component
	if comp == "" {
		comp = "web"
	}
	app := spec.App{Name: n.Name, Components: []spec.Component{{Name: comp, Type: spec.TypeWorkload, WorkloadSpec: &ws}}}
	if !n.JSON {
		return "app.yaml", newYAML(app, schemaRef(dir)), nil
	}
	content, err = json.MarshalIndent(app, "", "  ")
	if err != nil {
		return "", nil, err
	}
	return "app.json", append(content, '\n'), nil
}

// newYAML writes a new app's spec in the house layout.
func newYAML(app spec.App, schemaURL string) []byte {
	var b bytes.Buffer
	q := specedit.YAMLString
	fmt.Fprintf(&b, "# yaml-language-server: $schema=%s\n", schemaURL)
	fmt.Fprintf(&b, "name: %s\n", q(app.Name))
	b.WriteString("components:\n")
	for _, c := range app.Components {
		fmt.Fprintf(&b, "  - name: %s\n    type: %s\n    workload_spec:\n", q(c.Name), c.Type)
		ws := c.WorkloadSpec
		fmt.Fprintf(&b, "      build_mode: %s\n", ws.BuildMode)
		if ws.Image != "" {
			fmt.Fprintf(&b, "      image: %s\n", q(ws.Image))
		}
		if ws.Build != nil {
			fmt.Fprintf(&b, "      build: {dockerfile: %s}\n", q(ws.Build.Dockerfile))
		}
		if ws.Replicas != nil {
			fmt.Fprintf(&b, "      replicas: %d\n", *ws.Replicas)
		}
		if ws.Port != 0 {
			fmt.Fprintf(&b, "      port: %d\n", ws.Port)
		}
		if ing := ws.Ingress; ing != nil {
			if ing.Host != "" {
				fmt.Fprintf(&b, "      ingress: {enabled: true, host: %s}\n", jsonQuoteIfNeeded(ing.Host))
			} else {
				b.WriteString("      ingress: {enabled: true}\n")
			}
		}
	}
	return b.Bytes()
}

// jsonQuoteIfNeeded quotes a value for a flow map when plain text would
// not read back.
func jsonQuoteIfNeeded(s string) string {
	if strings.ContainsAny(s, ",[]{}") {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return specedit.YAMLString(s)
}

// schemaRef is the schema a new spec in dir points its editor at: the
// committed schema by relative path when dir is inside a checkout that
// has it, else its published address.
func schemaRef(dir string) string {
	for d := dir; ; {
		candidate := filepath.Join(d, "schema", "app.schema.json")
		if _, err := os.Stat(candidate); err == nil {
			if rel, err := filepath.Rel(dir, candidate); err == nil {
				return filepath.ToSlash(rel)
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return schema.AppID
		}
		d = parent
	}
}
