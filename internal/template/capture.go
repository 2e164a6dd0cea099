package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fleetwright/fleetwright/internal/specedit"
)

// CaptureParam names a value of an app that becomes a parameter.
type CaptureParam struct {
	Name string
	// Path of the value in the app spec; it must be under components.
	Path specedit.Path
	// Description of the parameter; default: where it was captured from.
	Description string
}

// CaptureOptions configure Capture.
type CaptureOptions struct {
	Name, Version, Description string
	// Source is the app spec's path, named in the template's first comment.
	Source string
	Params []CaptureParam
}

// Capture turns the components of an app spec into a template: the values
// named by opts.Params become placeholders, with the current values as
// the parameters' defaults and their YAML types as the parameters' types;
// every other byte of the components is copied as written, comments
// included. It returns the template's file name (template.yaml, or
// template.json for a JSON spec) and content. The result is checked: the
// template expanded with its defaults gives back the app's components.
func Capture(app *specedit.Doc, opts CaptureOptions) (string, []byte, error) {
	if !validName(opts.Name) {
		return "", nil, fmt.Errorf("%q is not a valid template name (lowercase letters, digits and '-', starting with a letter)", opts.Name)
	}
	if opts.Version == "" {
		opts.Version = "1.0.0"
	}
	if err := checkCapturable(app); err != nil {
		return "", nil, err
	}
	params, reps, err := captureParams(app, opts.Params)
	if err != nil {
		return "", nil, err
	}
	body, err := componentsText(app, reps)
	if err != nil {
		return "", nil, err
	}

	var name string
	var out []byte
	if app.IsJSON() {
		name = "template.json"
		out, err = captureJSON(opts, params, body)
	} else {
		name = "template.yaml"
		out, err = captureYAML(opts, params, body)
	}
	if err != nil {
		return "", nil, err
	}
	if err := checkGivesBack(app, name, out); err != nil {
		return "", nil, err
	}
	return name, out, nil
}

// componentsPath is where an app spec holds the components a template captures.
var componentsPath = specedit.Path{"components"}

// checkCapturable reports why the components of app cannot become a
// template: there are none, they are not a list, or a value in them
// already reads as a placeholder.
func checkCapturable(app *specedit.Doc) error {
	comps, err := app.Lookup(componentsPath)
	if err != nil {
		return fmt.Errorf("%s has no components to capture: %w", app.Name(), err)
	}
	if comps.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s: components is not a list", app.Name())
	}
	if lit := findPlaceholderText(comps); lit != "" {
		return fmt.Errorf("%s: the value %q holds \"${{\", which templates read as a placeholder; change it to \"$${{\" in the template by hand", app.Name(), lit)
	}
	return nil
}

// captureParams turns the values named by cps into the template's
// parameters and the replacements that put their placeholders in the
// text. Several parameters of one name are one parameter, provided they
// name equal values; two names for one value are an error.
func captureParams(app *specedit.Doc, cps []CaptureParam) ([]Param, []specedit.Replacement, error) {
	var params []Param
	var reps []specedit.Replacement
	byPath := map[string]string{}
	for _, cp := range cps {
		if !paramName.MatchString(cp.Name) {
			return nil, nil, fmt.Errorf("%q is not a valid parameter name (letters, digits and _, not starting with a digit)", cp.Name)
		}
		p, err := app.Resolve(cp.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("parameter %s: %w", cp.Name, err)
		}
		if len(p) < 2 || p[0] != "components" {
			return nil, nil, fmt.Errorf("parameter %s: %s is not inside components; a template holds only components", cp.Name, cp.Path)
		}
		if prev, dup := byPath[p.String()]; dup {
			return nil, nil, fmt.Errorf("parameters %s and %s name the same value %s", prev, cp.Name, p)
		}
		byPath[p.String()] = cp.Name
		param, rep, err := captureParam(app, cp, p)
		if err != nil {
			return nil, nil, err
		}
		if i := indexParam(params, cp.Name); i >= 0 {
			if params[i].Type != param.Type || !reflect.DeepEqual(params[i].Default, param.Default) {
				return nil, nil, fmt.Errorf("parameter %s names values that differ (%v and %v)", cp.Name, params[i].Default, param.Default)
			}
		} else {
			params = append(params, param)
		}
		reps = append(reps, rep)
	}
	return params, reps, nil
}

// captureParam makes the parameter cp of the value at p, the resolved
// path of cp.Path, and the replacement that puts its placeholder there,
// quoted where the value was quoted or stands in a flow collection.
func captureParam(app *specedit.Doc, cp CaptureParam, p specedit.Path) (Param, specedit.Replacement, error) {
	n, _ := app.Lookup(p)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return Param{}, specedit.Replacement{}, fmt.Errorf("parameter %s: %s is not a single value (a string, number or boolean)", cp.Name, p)
	}
	def, err := scalarValue(n)
	if err != nil {
		return Param{}, specedit.Replacement{}, fmt.Errorf("parameter %s: %s: %w", cp.Name, p, err)
	}
	typ := String
	switch n.ShortTag() {
	case "!!int":
		typ = Integer
	case "!!float":
		typ = Number
	case "!!bool":
		typ = Boolean
	}
	desc := cp.Description
	if desc == "" {
		desc = "captured from " + cp.Path.String()
	}
	s, e, err := app.Span(p)
	if err != nil {
		return Param{}, specedit.Replacement{}, err
	}
	flow, _ := app.InFlow(p)
	text := Placeholder(cp.Name)
	if flow || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		text = `"` + text + `"`
	}
	return Param{Name: cp.Name, Type: typ, Default: def, Description: desc},
		specedit.Replacement{Start: s, End: e, Text: text}, nil
}

// componentsText is the components' own text with reps applied: in YAML
// the whole components entry, key included, which must start its line;
// in JSON the components' value.
func componentsText(app *specedit.Doc, reps []specedit.Replacement) (string, error) {
	var start, end int
	var err error
	if app.IsJSON() {
		start, end, err = app.Span(componentsPath)
	} else {
		if k := componentsKey(app.Root()); k == nil || k.Column != 1 {
			return "", fmt.Errorf("%s: components must start at the beginning of its line", app.Name())
		}
		start, end, err = app.EntrySpan(componentsPath)
	}
	if err != nil {
		return "", err
	}
	replaced, err := app.ReplaceSpans(reps)
	if err != nil {
		return "", err
	}
	delta := 0
	for _, r := range reps {
		delta += len(r.Text) - (r.End - r.Start)
	}
	return string(replaced[start : end+delta]), nil
}

// checkGivesBack reports an error unless the template out, named name,
// expanded with its defaults gives back the components of app.
func checkGivesBack(app *specedit.Doc, name string, out []byte) error {
	t, err := Parse(name, out)
	if err != nil {
		return fmt.Errorf("the captured template is invalid:\n%w", err)
	}
	exp, _ := t.Expand(nil)
	var got, want any
	if err := exp.Decode(&got); err != nil {
		return err
	}
	if want, err = app.Value(componentsPath); err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("the captured template does not give back the components of %s", app.Name())
	}
	return nil
}

func indexParam(ps []Param, name string) int {
	for i := range ps {
		if ps[i].Name == name {
			return i
		}
	}
	return -1
}

func componentsKey(root *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "components" {
			return root.Content[i]
		}
	}
	return nil
}

func findPlaceholderText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${{") {
		return n.Value
	}
	for _, c := range n.Content {
		if s := findPlaceholderText(c); s != "" {
			return s
		}
	}
	return ""
}

func scalarNode(v any, typ Type) *yaml.Node {
	tag, val := typedScalar(typ, v)
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: val}
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func captureYAML(opts CaptureOptions, params []Param, body string) ([]byte, error) {
	top := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { top.Content = append(top.Content, strNode(k), v) }
	add("name", strNode(opts.Name))
	add("version", strNode(opts.Version))
	if opts.Description != "" {
		add("description", strNode(opts.Description))
	}
	list := &yaml.Node{Kind: yaml.SequenceNode}
	if len(params) == 0 {
		list.Style = yaml.FlowStyle
	}
	for _, p := range params {
		m := &yaml.Node{Kind: yaml.MappingNode}
		m.Content = append(m.Content,
			strNode("name"), strNode(p.Name),
			strNode("type"), strNode(string(p.Type)),
			strNode("default"), scalarNode(p.Default, p.Type),
			strNode("description"), strNode(p.Description))
		list.Content = append(list.Content, m)
	}
	add("parameters", list)
	var b bytes.Buffer
	if opts.Source != "" {
		fmt.Fprintf(&b, "# Stack template captured from %s.\n", opts.Source)
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(top); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

type jsonParam struct {
	Name        string `json:"name"`
	Type        Type   `json:"type"`
	Default     any    `json:"default"`
	Description string `json:"description,omitempty"`
}

type jsonHead struct {
	Name        string      `json:"name"`
	Version     string      `json:"version"`
	Description string      `json:"description,omitempty"`
	Parameters  []jsonParam `json:"parameters"`
}

func captureJSON(opts CaptureOptions, params []Param, body string) ([]byte, error) {
	h := jsonHead{Name: opts.Name, Version: opts.Version, Description: opts.Description, Parameters: []jsonParam{}}
	for _, p := range params {
		h.Parameters = append(h.Parameters, jsonParam{Name: p.Name, Type: p.Type, Default: p.Default, Description: p.Description})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(h); err != nil {
		return nil, err
	}
	head := strings.TrimSuffix(strings.TrimSpace(b.String()), "}")
	head = strings.TrimRight(head, " \n")
	return []byte(head + ",\n  \"components\": " + body + "\n}\n"), nil
}
