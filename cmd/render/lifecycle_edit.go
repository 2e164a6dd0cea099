package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/specedit"
	"github.com/fleetwright/fleetwright/internal/template"
	"github.com/fleetwright/fleetwright/schema"
)

// pausedAfter lists the keys a new paused field goes after, first found wins.
func pausedAfter() []string {
	return []string{"timeout", "cluster", "project_id", "project", "name"}
}

// editDoc parses an app's spec file for editing.
func (w *workspace) editDoc(a *spec.LoadedApp) (*specedit.Doc, error) {
	data, ok := w.files[a.File]
	if !ok {
		return nil, fmt.Errorf("%s: not read", a.File)
	}
	d, err := specedit.Parse(a.File, data)
	if err != nil {
		return nil, &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	return d, nil
}

func runPauseResume(ctx context.Context, args []string, io stdio, pause bool) error {
	verb := map[bool]string{true: "pause", false: "resume"}[pause]
	fs := newFlags("render "+verb, io)
	f := addEditFlags(fs, false)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render %s APP [--commit]", verb)
	}
	w, a, err := openApp(f.repo, pos[0])
	if err != nil {
		return err
	}
	if a.Spec.Paused == pause {
		fmt.Fprintf(io.out, "%s is already %s; nothing to do\n", appName(a), map[bool]string{true: "paused", false: "running (not paused)"}[pause])
		return nil
	}
	d, err := w.editDoc(a)
	if err != nil {
		return err
	}
	ch := &change{}
	if pause {
		_, err = d.Set(specedit.Path{"paused"}, true, pausedAfter()...)
		ch.subject = "pause " + appName(a)
		ch.body = fmt.Sprintf("Sets paused: true in %s. Its workloads render with 0 replicas and no autoscaler; the spec keeps their counts, and addons keep running.", a.File)
		ch.done = fmt.Sprintf("paused %s (%s)", appName(a), w.display(a.File))
	} else {
		_, err = d.Delete(specedit.Path{"paused"})
		ch.subject = "resume " + appName(a)
		ch.body = fmt.Sprintf("Removes paused from %s. Its workloads render with their replica counts and autoscalers again.", a.File)
		ch.done = fmt.Sprintf("resumed %s (%s)", appName(a), w.display(a.File))
	}
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	ch.write = map[string][]byte{a.File: d.Bytes()}
	return w.apply(ctx, ch, f, io)
}

func runScale(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render scale", io)
	f := addEditFlags(fs, false)
	minR := fs.Int("min", -1, "autoscaling lower bound (min_replicas)")
	maxR := fs.Int("max", -1, "autoscaling upper bound (max_replicas)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	bounds := *minR >= 0 || *maxR >= 0
	switch {
	case len(pos) == 3 && !bounds, len(pos) == 2 && bounds:
	default:
		return cli.Usagef("usage: render scale APP COMPONENT REPLICAS, or render scale APP COMPONENT --min N --max N")
	}
	type setOp struct {
		path  []any // below the component's workload_spec
		value int
		after []string
	}
	var ops []setOp
	var what string
	if len(pos) == 3 {
		n, err := strconv.Atoi(pos[2])
		if err != nil || n < 0 {
			return cli.Usagef("REPLICAS must be a whole number ≥ 0, got %q", pos[2])
		}
		ops = append(ops, setOp{[]any{"replicas"}, n, []string{"replicas", "image", "build", "build_mode"}})
		what = fmt.Sprintf("to %d replicas", n)
	} else {
		var parts []string
		if *minR >= 0 {
			ops = append(ops, setOp{[]any{"autoscaling", "min_replicas"}, *minR, []string{"min_replicas", "replicas", "port", "image"}})
			parts = append(parts, fmt.Sprintf("min %d", *minR))
		}
		if *maxR >= 0 {
			ops = append(ops, setOp{[]any{"autoscaling", "max_replicas"}, *maxR, []string{"max_replicas", "min_replicas", "replicas", "port", "image"}})
			parts = append(parts, fmt.Sprintf("max %d", *maxR))
		}
		what = "autoscaling to " + strings.Join(parts, ", ") + " replicas"
	}

	w, a, err := openApp(f.repo, pos[0])
	if err != nil {
		return err
	}
	comp := pos[1]
	c := a.Component(comp)
	if c == nil || c.Type != spec.TypeWorkload {
		var names []string
		for _, x := range a.Spec.Components {
			if x.Type == spec.TypeWorkload {
				names = append(names, x.Name)
			}
		}
		kind := "no component"
		if c != nil {
			kind = "component " + strconv.Quote(comp) + " is an addon, not a workload;"
		} else {
			kind += " " + strconv.Quote(comp) + ";"
		}
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s has %s its workloads: %s", appName(a), kind, strings.Join(names, ", "))}
	}
	if len(pos) == 3 && c.WorkloadSpec != nil && c.WorkloadSpec.Autoscaling != nil {
		fmt.Fprintf(io.err, "warning: %s %s autoscales; replicas counts only while the app is paused (use --min/--max for the autoscaler)\n", appName(a), comp)
	}

	d, err := w.editDoc(a)
	if err != nil {
		return err
	}
	var t *template.Template
	if a.Spec.Template != nil {
		if t, err = w.template(a.Spec.Template.Name); err != nil {
			return err
		}
	}
	changed := false
	for _, op := range ops {
		var p specedit.Path
		if t != nil {
			// The component comes from a template: change the app's
			// parameter that the value is made of.
			param, ok := t.ParamAt(append([]any{comp, "workload_spec"}, op.path...))
			if !ok {
				return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s takes %s from template %s, where %s.workload_spec.%s is not a parameter; make it one in %s, or change it there",
					appName(a), comp, t.Name, comp, specedit.Path(op.path), t.File)}
			}
			p = specedit.Path{"template", "parameters", param}
		} else {
			p = append(specedit.Path{"components", specedit.ByName(comp), "workload_spec"}, op.path...)
		}
		ch, err := d.Set(p, op.value, op.after...)
		if err != nil {
			return &cli.ExitError{Code: cli.ExitFailed, Err: err}
		}
		changed = changed || ch
	}
	if !changed {
		fmt.Fprintf(io.out, "%s %s is already scaled %s; nothing to do\n", appName(a), comp, what)
		return nil
	}
	return w.apply(ctx, &change{
		write:   map[string][]byte{a.File: d.Bytes()},
		subject: fmt.Sprintf("scale %s %s %s", appName(a), comp, what),
		done:    fmt.Sprintf("scaled %s %s %s (%s)", appName(a), comp, what, w.display(a.File)),
	}, f, io)
}

// template parses the template called name from the workspace's files.
func (w *workspace) template(name string) (*template.Template, error) {
	for _, n := range template.FileNames {
		p := path.Join(spec.TemplateDir(name), n)
		if b, ok := w.files[p]; ok {
			t, err := template.Parse(w.display(p), b)
			if err != nil {
				return nil, &cli.ExitError{Code: cli.ExitFailed, Err: err}
			}
			return t, nil
		}
	}
	return nil, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("no template %q in %s", name, w.display(template.Dir))}
}

func runDelete(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render delete", io)
	f := addEditFlags(fs, false)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render delete APP [--commit]")
	}
	w, a, err := openApp(f.repo, pos[0])
	if err != nil {
		return err
	}
	dir := path.Dir(a.File)
	if strings.Count(dir, "/") < 2 {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s is not in a folder of its own (apps/<project>/<app>/); delete it by hand", w.display(a.File))}
	}
	for p := range w.files {
		if p != a.File && under(p, dir) {
			return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s also holds %s; delete by hand what should go", w.display(dir), w.display(p))}
		}
	}
	if users := w.exportUsers(a); len(users) > 0 {
		fmt.Fprintf(io.err, "render: %s cannot be deleted: other apps use its exports:\n", appName(a))
		for _, u := range users {
			fmt.Fprintln(io.err, "  "+u)
		}
		return cli.Failed()
	}
	return w.apply(ctx, &change{
		remove:  []string{dir},
		subject: "delete " + appName(a),
		body:    fmt.Sprintf("Removes %s/. render then deletes the app's fleet files, and Flux prunes its objects from the cluster.", dir),
		done:    fmt.Sprintf("deleted %s (%s/)", appName(a), w.display(dir)),
	}, f, io)
}

// exportUsers lists, as file:line:col lines, the env vars of other apps
// that take an export of a.
func (w *workspace) exportUsers(a *spec.LoadedApp) []string {
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
				at := spec.Path{"components", i, "workload_spec", "env", j, "export_ref"}
				pos := b.Doc.Pos(at)
				out = append(out, fmt.Sprintf("%s:%d:%d: %s: %s of %s (%s.%s)", b.Doc.File, pos.Line, pos.Col, at, e.Name, appName(b), e.ExportRef.Component, e.ExportRef.ExportKey))
			}
		}
	}
	slices.Sort(out)
	return out
}

func runNew(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render new", io)
	f := addEditFlags(fs, false)
	project := fs.String("project", "", "project of the app (default: the only project under apps/)")
	image := fs.String("image", "", "image to run, such as myorg/my-api:v1.2.0")
	dockerfile := fs.String("dockerfile", "", "build the image from this Dockerfile (relative to the app's folder) instead of --image")
	port := fs.Int("port", 0, "port the container listens on")
	replicas := fs.Int("replicas", -1, "replicas (default 1)")
	ingress := fs.Bool("ingress", false, "expose the workload over HTTPS (needs --port)")
	host := fs.String("host", "", "ingress host name (implies --ingress; default <app>-<project>.<apps_domain>)")
	component := fs.String("component", "web", "name of the workload component")
	asJSON := fs.Bool("json", false, "write app.json instead of app.yaml")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("usage: render new NAME [--project P] [--image IMG | --dockerfile PATH] [--port N] [--replicas N] [--ingress] [--host H]")
	}
	name := pos[0]
	switch {
	case (*image == "") == (*dockerfile == ""):
		return cli.Usagef("give one of --image or --dockerfile")
	case *host != "" || *ingress:
		if *port == 0 {
			return cli.Usagef("an ingress needs --port")
		}
		*ingress = true
	}
	w, err := openWorkspace(f.repo)
	if err != nil {
		return err
	}
	if *project == "" {
		entries, _ := os.ReadDir(filepath.Join(w.abs, "apps"))
		var projects []string
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				projects = append(projects, e.Name())
			}
		}
		if len(projects) != 1 {
			return cli.Usagef("give --project (the apps repository has %d projects)", len(projects))
		}
		*project = projects[0]
	}
	dir := path.Join("apps", *project, name)
	for _, n := range spec.SpecFileNames {
		if _, err := os.Stat(filepath.Join(w.abs, filepath.FromSlash(path.Join(dir, n)))); err == nil {
			return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s already exists", w.display(path.Join(dir, n)))}
		}
	}
	ws := spec.WorkloadSpec{Image: *image, Port: *port}
	if *image != "" {
		ws.BuildMode = spec.BuildModeImage
	} else {
		ws.BuildMode = spec.BuildModeDockerfile
		ws.Build = &spec.BuildSpec{Dockerfile: *dockerfile}
	}
	if *replicas >= 0 {
		n := int32(*replicas)
		ws.Replicas = &n
	}
	if *ingress {
		ws.Ingress = &spec.Ingress{Enabled: true, Host: *host}
	}
	app := spec.App{Name: name, Components: []spec.Component{{Name: *component, Type: spec.TypeWorkload, WorkloadSpec: &ws}}}
	file := path.Join(dir, "app.yaml")
	var content []byte
	if *asJSON {
		file = path.Join(dir, "app.json")
		if content, err = json.MarshalIndent(app, "", "  "); err != nil {
			return err
		}
		content = append(content, '\n')
	} else {
		content = newYAML(app, schemaRef(filepath.Join(w.abs, filepath.FromSlash(dir))))
	}
	return w.apply(ctx, &change{
		write:   map[string][]byte{file: content},
		subject: fmt.Sprintf("new app %s/%s", *project, name),
		body:    fmt.Sprintf("Adds %s.", file),
		done:    "created " + w.display(file),
	}, f, io)
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
			fmt.Fprintf(&b, "      build: {dockerfile: %s}\n", specedit.YAMLString(ws.Build.Dockerfile))
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
