package main

import (
	"context"
	"fmt"

	"github.com/fleetwright/fleetwright/internal/cli"
	"github.com/fleetwright/fleetwright/internal/lifecycle"
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
	var c lifecycle.Capture
	fs.StringVar(&c.Version, "version", "1.0.0", "version of the new template")
	fs.StringVar(&c.Description, "description", "", "description of the new template")
	fs.BoolVar(&c.Force, "force", false, "replace a template of that name")
	fs.Func("param", "KEY=JSONPATH: make the value at JSONPATH a parameter called KEY (repeatable)", c.AddParam)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return cli.Usagef("usage: render template capture APP NAME [--param KEY=JSONPATH ...]")
	}
	c.Name = pos[1]
	o := lifecycleOptions(io, f.repo, pos[0])
	ch, t, err := lifecycle.CaptureTemplate(ctx, o, c)
	if err := f.finish(ctx, o, ch, err, io); err != nil || f.dryRun {
		return err
	}
	printTemplateUse(io, c.Name, t)
	return nil
}

// printTemplateUse shows how an app uses the template t called name.
func printTemplateUse(io stdio, name string, t *template.Template) {
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
}
