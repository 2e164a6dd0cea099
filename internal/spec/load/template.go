package load

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fleetwright/fleetwright/internal/template"
)

// TemplateDir is the folder of the stack template called name, relative to
// the apps repository.
func TemplateDir(name string) string { return path.Join(template.Dir, name) }

// maxCachedTemplates bounds the parsed templates a Loader keeps.
const maxCachedTemplates = 256

// templateCache keeps parsed templates by file name and content, so many
// apps of one template parse it once.
type templateCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*cachedTemplate
}

type cachedTemplate struct {
	t  *template.Template
	ps Problems
}

func (c *templateCache) parse(file string, data []byte) (*template.Template, Problems) {
	h := sha256.New()
	h.Write([]byte(file))
	h.Write([]byte{0})
	h.Write(data)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		return e.t, e.ps
	}
	t, err := template.Parse(file, data)
	var ps Problems
	if err != nil {
		if tps, ok := err.(template.Problems); ok {
			ps = append(ps, tps...)
		} else {
			ps.AddErr(file, err)
		}
	}
	if c.m == nil || len(c.m) >= maxCachedTemplates {
		c.m = map[[sha256.Size]byte]*cachedTemplate{}
	}
	c.m[key] = &cachedTemplate{t: t, ps: ps}
	return t, ps
}

// expansion is an app document whose components come from a template.
type expansion struct {
	doc  *Document // the app with its components expanded
	tdoc *Document // the expanded components at the template file's positions
	// paths maps Path.String() of every expanded value to its Path.
	paths map[string]Path
	// fromApp holds the values filled from a parameter that the app sets:
	// their problems point at that parameter.
	fromApp map[string]bool
}

// expandTemplate returns the app document with the components of the
// template it names, or nil when it names none or the template cannot be
// used (the problems say why).
func (l *Loader) expandTemplate(fsys fs.FS, doc *Document, ps *Problems) *expansion {
	top, ok := doc.Value.(map[string]any)
	if !ok {
		return nil
	}
	ref, ok := top["template"].(map[string]any)
	if !ok {
		return nil // absent, or the schema reports its type
	}
	name, _ := ref["name"].(string)
	if name == "" {
		return nil
	}
	if _, has := top["components"]; has {
		ps.AddKey(doc, Path{"components"}, "an app that uses a template takes its components from it; remove components, or template")
		return nil
	}
	if m := CheckLabel(name, 63); m != "" {
		ps.Add(doc, Path{"template", "name"}, "%s", m)
		return nil
	}
	t := l.readTemplate(fsys, name, doc, ps)
	if t == nil {
		return nil
	}
	if v, ok := ref["version"].(string); ok && v != "" && v != t.Version {
		ps.Add(doc, Path{"template", "version"}, "template %s is at version %s, not %s; update the version (and the parameters if they changed)", name, t.Version, v)
		return nil
	}
	given, _ := ref["parameters"].(map[string]any)
	if errs := t.Check(given); len(errs) > 0 {
		for _, e := range errs {
			at := Path{"template", "parameters", e.Param}
			switch {
			case e.Param != "" && doc.Has(at) && e.Unknown:
				ps.AddKey(doc, at, "%s", e.Message)
			case e.Param != "" && doc.Has(at):
				ps.Add(doc, at, "%s", e.Message)
			case doc.Has(Path{"template", "parameters"}):
				ps.AddKey(doc, Path{"template", "parameters"}, "%s", e.Message)
			default:
				ps.AddKey(doc, Path{"template"}, "%s", e.Message)
			}
		}
		return nil
	}

	comps, origins := t.Expand(given)
	tdoc := &Document{File: t.File, pos: map[string]nodePos{}}
	c := converter{doc: tdoc, record: true}
	v, err := c.convert(comps, Path{"components"}, Pos{comps.Line, comps.Column}, 1)
	if err != nil {
		ps.AddErr(t.File, err)
		return nil
	}
	tdoc.Value = map[string]any{"components": v}

	value := make(map[string]any, len(top)+1)
	for k, x := range top {
		value[k] = x
	}
	value["components"] = v
	x := &expansion{
		doc:     &Document{File: doc.File, Value: value, pos: doc.allPositions()},
		tdoc:    tdoc,
		paths:   map[string]Path{},
		fromApp: map[string]bool{},
	}
	// Values from the template point at the app's template field (the
	// key for key positions, the value for value positions, so a problem
	// keeps which one it meant); values from a parameter the app sets point
	// at that parameter.
	tpl := nodePos{key: doc.KeyPos(Path{"template"}), val: doc.Pos(Path{"template"})}
	walkNodes(comps, Path{"components"}, func(p Path, n *yaml.Node) {
		x.paths[p.String()] = p
		np := tpl
		for _, param := range origins[n] {
			if at := (Path{"template", "parameters", param}); doc.Has(at) {
				np = nodePos{key: doc.KeyPos(at), val: doc.Pos(at)}
				x.fromApp[p.String()] = true
				break
			}
		}
		x.doc.pos[pathKey(p)] = np
	})
	return x
}

// readTemplate finds, reads and parses templates/<name>/template.*.
func (l *Loader) readTemplate(fsys fs.FS, name string, doc *Document, ps *Problems) *template.Template {
	dir := TemplateDir(name)
	// The first of the names that exists is the template. Opening the
	// usual name first keeps the common case to one look-up: looking up a
	// missing file can cost a scan of every file (fstest.MapFS).
	var file string
	var data []byte
	for _, n := range template.FileNames {
		p := path.Join(dir, n)
		b, err := readLimited(fsys, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			ps.AddErr(l.display(p), err)
			return nil
		}
		if !l.checkLinks(fsys, p, false, ps) {
			return nil
		}
		file, data = p, b
		break
	}
	if file == "" {
		msg := fmt.Sprintf("no template %q: %s/template.yaml does not exist", name, l.display(dir))
		if known := templateNames(fsys); len(known) > 0 {
			if sug := suggest(name, known); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			} else {
				msg += "; templates: " + strings.Join(known, ", ")
			}
		}
		ps.Add(doc, Path{"template", "name"}, "%s", msg)
		return nil
	}
	t, tps := l.templates.parse(l.display(file), data)
	if len(tps) > 0 {
		*ps = append(*ps, tps...)
		ps.Add(doc, Path{"template", "name"}, "template %q is invalid; see the problems in %s", name, l.display(file))
		return nil
	}
	if t.Name != name {
		ps.Add(doc, Path{"template", "name"}, "%s is named %q; a template's name must be its folder's", l.display(file), t.Name)
		return nil
	}
	return t
}

func templateNames(fsys fs.FS) []string {
	entries, err := fs.ReadDir(fsys, template.Dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// walkNodes calls f for every node under n with its path. Templates hold
// no aliases or merge keys, so paths follow the nodes one to one.
func walkNodes(n *yaml.Node, p Path, f func(Path, *yaml.Node)) {
	f(p, n)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			walkNodes(n.Content[i+1], p.Child(n.Content[i].Value), f)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkNodes(c, p.Child(i), f)
		}
	}
}

// relocate moves the problems found since from that concern the expanded
// components into the template file, except those at values that came
// from the app's own parameters.
func (x *expansion) relocate(ps *Problems, from int) {
	for _, p := range (*ps)[from:] {
		if p.File != x.doc.File || !underComponents(p.Path) {
			continue
		}
		at, ok := x.nearest(p.Path)
		if !ok || x.fromApp[at.String()] {
			continue
		}
		keyPos := x.doc.KeyPos(at)
		p.File = x.tdoc.File
		if posOf(p) == keyPos && keyPos != x.doc.Pos(at) {
			setPos(p, x.tdoc.KeyPos(at))
		} else {
			setPos(p, x.tdoc.Pos(at))
		}
	}
}

func underComponents(s string) bool {
	return s == "components" || strings.HasPrefix(s, "components[") || strings.HasPrefix(s, "components.")
}

// nearest returns the deepest expanded path at or above the path written s.
func (x *expansion) nearest(s string) (Path, bool) {
	for s != "" {
		if p, ok := x.paths[s]; ok {
			return p, true
		}
		i := strings.LastIndexAny(s, ".[")
		if i <= 0 {
			break
		}
		s = s[:i]
	}
	return nil, false
}

// readLimited reads a file of at most MaxFileSize bytes.
func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("file is more than %d bytes, the limit", MaxFileSize)
	}
	return data, nil
}
