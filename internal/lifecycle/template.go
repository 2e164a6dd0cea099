package lifecycle

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/specedit"
	"github.com/fleetwright/fleetwright/internal/template"
)

// Capture describes the stack template CaptureTemplate writes.
type Capture struct {
	Name        string
	Version     string
	Description string
	// Params turn values of the app's spec into template parameters, with
	// the current value as the default.
	Params []template.CaptureParam
	// Force replaces a template of that name.
	Force bool
}

// AddParam adds the parameter of s, KEY=JSONPATH: the value at JSONPATH
// (such as components[api].workload_spec.image) becomes the parameter KEY.
func (c *Capture) AddParam(s string) error {
	key, p, ok := strings.Cut(s, "=")
	if !ok || key == "" || p == "" {
		return fmt.Errorf("want KEY=JSONPATH, got %q", s)
	}
	jp, err := specedit.ParsePath(p)
	if err != nil {
		return err
	}
	c.Params = append(c.Params, template.CaptureParam{Name: key, Path: jp})
	return nil
}

// CaptureTemplate writes templates/NAME/ from the app's components and
// returns the template as it reads back.
func CaptureTemplate(ctx context.Context, o Options, c Capture) (*Change, *template.Template, error) {
	w, a, err := openApp(o)
	if err != nil {
		return nil, nil, err
	}
	if a.Spec.Template != nil {
		return nil, nil, refuse("%s already uses template %s", a.Ref(), a.Spec.Template.Name)
	}
	dir := load.TemplateDir(c.Name)
	if !c.Force {
		for _, n := range template.FileNames {
			if w.exists(path.Join(dir, n)) {
				return nil, nil, refuse("%s already exists; pass --force to replace it", w.display(path.Join(dir, n)))
			}
		}
	}
	d, err := w.editDoc(a)
	if err != nil {
		return nil, nil, err
	}
	file, data, err := template.Capture(d, template.CaptureOptions{
		Name: c.Name, Version: c.Version, Description: c.Description, Source: a.File, Params: c.Params,
	})
	if err != nil {
		return nil, nil, refused(err)
	}
	t, err := template.Parse(file, data)
	if err != nil {
		return nil, nil, refused(err)
	}
	ch := &Change{
		Write:   map[string][]byte{path.Join(dir, file): data},
		Subject: fmt.Sprintf("template %s from %s", c.Name, a.Ref()),
		Body:    fmt.Sprintf("Captures the components of %s as stack template %s %s with %d parameter(s).", a.File, c.Name, t.Version, len(t.Params)),
		Done:    fmt.Sprintf("wrote %s with %d parameter(s)", w.display(path.Join(dir, file)), len(t.Params)),
	}
	for _, other := range template.FileNames {
		if p := path.Join(dir, other); other != file && w.exists(p) {
			ch.Remove = append(ch.Remove, p)
		}
	}
	if ch, err = w.done(ch); err != nil {
		return nil, nil, err
	}
	return ch, t, nil
}
