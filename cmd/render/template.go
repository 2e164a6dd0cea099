package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/specedit"
	"github.com/fleetwright/fleetwright/internal/template"
)

const templateUsage = `Usage:
  render template capture APP NAME [--param KEY=JSONPATH ...] [--version V] [--commit]
      write templates/NAME/template.yaml from APP's components; each --param turns
      the value at JSONPATH (such as components[api].workload_spec.image) into the
      parameter KEY, with the current value as its default
`

func runTemplate(ctx context.Context, args []string, io stdio) error {
	if len(args) == 0 {
		return cli.Usagef("render template needs a command\n%s", templateUsage)
	}
	switch args[0] {
	case "capture":
		return runTemplateCapture(ctx, args[1:], io)
	case "help", "-h", "--help":
		fmt.Fprint(io.out, templateUsage)
		return nil
	}
	return cli.Usagef("unknown command %q\n%s", "template "+args[0], templateUsage)
}

func runTemplateCapture(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("render template capture", io)
	f := addEditFlags(fs, false)
	version := fs.String("version", "1.0.0", "version of the new template")
	description := fs.String("description", "", "description of the new template")
	force := fs.Bool("force", false, "replace a template of that name")
	var params []template.CaptureParam
	fs.Func("param", "KEY=JSONPATH: make the value at JSONPATH a parameter called KEY (repeatable)", func(s string) error {
		key, p, ok := strings.Cut(s, "=")
		if !ok || key == "" || p == "" {
			return fmt.Errorf("want KEY=JSONPATH, got %q", s)
		}
		jp, err := specedit.ParsePath(p)
		if err != nil {
			return err
		}
		params = append(params, template.CaptureParam{Name: key, Path: jp})
		return nil
	})
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return cli.Usagef("usage: render template capture APP NAME [--param KEY=JSONPATH ...]")
	}
	w, a, err := openApp(f.repo, pos[0])
	if err != nil {
		return err
	}
	if a.Spec.Template != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s already uses template %s", appName(a), a.Spec.Template.Name)}
	}
	name := pos[1]
	dir := spec.TemplateDir(name)
	if !*force {
		for _, n := range template.FileNames {
			if _, err := os.Stat(filepath.Join(w.abs, filepath.FromSlash(path.Join(dir, n)))); err == nil {
				return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s already exists; pass --force to replace it", w.display(path.Join(dir, n)))}
			}
		}
	}
	d, err := w.editDoc(a)
	if err != nil {
		return err
	}
	file, data, err := template.Capture(d, template.CaptureOptions{
		Name: name, Version: *version, Description: *description, Source: a.File, Params: params,
	})
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	t, err := template.Parse(file, data)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: err}
	}
	ch := &change{
		write:   map[string][]byte{path.Join(dir, file): data},
		subject: fmt.Sprintf("template %s from %s", name, appName(a)),
		body:    fmt.Sprintf("Captures the components of %s as stack template %s %s with %d parameter(s).", a.File, name, t.Version, len(t.Params)),
		done:    fmt.Sprintf("wrote %s with %d parameter(s)", w.display(path.Join(dir, file)), len(t.Params)),
	}
	for _, other := range template.FileNames {
		if p := path.Join(dir, other); other != file {
			if _, err := os.Stat(filepath.Join(w.abs, filepath.FromSlash(p))); err == nil {
				ch.remove = append(ch.remove, p)
			}
		}
	}
	if err := w.apply(ctx, ch, f, io); err != nil || f.dryRun {
		return err
	}
	fmt.Fprintf(io.out, "an app uses it with:\n  template:\n    name: %s\n    version: %s\n", name, specedit.YAMLString(t.Version))
	if len(t.Params) > 0 {
		fmt.Fprintln(io.out, "    parameters:")
		for _, p := range t.Params {
			def := fmt.Sprint(p.Default)
			if s, ok := p.Default.(string); ok {
				def = specedit.YAMLString(s)
			}
			fmt.Fprintf(io.out, "      %s: %s   # %s\n", p.Name, def, p.Type)
		}
	}
	return nil
}
