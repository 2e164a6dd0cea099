package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/fleetwright/fleetwright/internal/diag"
)

// Dir is the folder of the apps repository that holds the templates.
const Dir = "templates"

// FileNames are the names a template file may have, in order of preference.
var FileNames = []string{"template.yaml", "template.yml", "template.json"}

// MaxFileSize bounds a template file.
const MaxFileSize = 1 << 20

// Type is a parameter's type.
type Type string

// Parameter types.
const (
	String  Type = "string"
	Integer Type = "integer"
	Boolean Type = "boolean"
	Number  Type = "number"
)

// Param is one parameter of a template.
type Param struct {
	Name        string
	Type        Type
	Description string
	Required    bool
	// Default is the value used when the app does not set the parameter:
	// a string, bool or json.Number; nil when there is none.
	Default any
	// Optional constraints, checked by the parameters' JSON Schema.
	Enum      []any
	Minimum   *json.Number
	Maximum   *json.Number
	Pattern   string
	Line, Col int // of the parameter's name in the template file

	defLine, defCol int // of the default
}

// Template is a parsed stack template.
type Template struct {
	File        string // as given to Parse
	Name        string
	Version     string
	Description string
	Params      []Param
	// Components is the template's components list as written, with
	// placeholders.
	Components *yaml.Node

	refs   map[*yaml.Node][]piece // the placeholders of each scalar that has some
	schema *jsonschema.Schema
}

// Param returns the parameter called name, or nil.
func (t *Template) Param(name string) *Param {
	for i := range t.Params {
		if t.Params[i].Name == name {
			return &t.Params[i]
		}
	}
	return nil
}

// ParamNames lists the parameters' names in the template's order.
func (t *Template) ParamNames() []string {
	names := make([]string, len(t.Params))
	for i, p := range t.Params {
		names[i] = p.Name
	}
	return names
}

// Problems is every problem of one template file: errors at its lines and
// columns, each printed as file:line:col: path: message.
type Problems []*diag.Diagnostic

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problem is an error of a template file at line and col.
func problem(file string, line, col int, path, msg string) *diag.Diagnostic {
	return &diag.Diagnostic{File: file, Line: line, Column: col, Path: path, Message: msg, Severity: diag.Error}
}

type parser struct {
	file string
	ps   Problems
}

func (p *parser) add(n *yaml.Node, path, format string, args ...any) {
	line, col := 1, 1
	if n != nil {
		line, col = n.Line, n.Column
	}
	p.ps = append(p.ps, problem(p.file, line, col, path, fmt.Sprintf(format, args...)))
}

var paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads a template file (YAML, or JSON when file ends in .json). The
// error, when not nil, is Problems pointing at lines of the file.
func Parse(file string, data []byte) (*Template, error) {
	p := &parser{file: file}
	if len(data) > MaxFileSize {
		p.add(nil, "", "file is %d bytes; the limit is %d", len(data), MaxFileSize)
		return nil, p.ps
	}
	if strings.HasSuffix(file, ".json") {
		if !json.Valid(data) {
			p.add(nil, "", "invalid JSON")
			return nil, p.ps
		}
		data = bytes.ReplaceAll(data, []byte{'\t'}, []byte{' '})
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.add(nil, "", "file is empty")
		} else {
			p.add(nil, "", "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return nil, p.ps
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.add(&extra, "", "a template file holds one document; found a second one")
		return nil, p.ps
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		p.add(&doc, "", "a template must be a map with name, version, parameters and components")
		return nil, p.ps
	}
	t := &Template{File: file, refs: map[*yaml.Node][]piece{}}
	root := doc.Content[0]
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if _, dup := seen[k.Value]; dup {
			p.add(k, k.Value, "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = v
		switch k.Value {
		case "name":
			t.Name = p.str(v, "name")
		case "version":
			t.Version = p.str(v, "version")
		case "description":
			t.Description = p.str(v, "description")
		case "parameters":
			p.params(t, v)
		case "components":
			t.Components = v
		default:
			p.add(k, k.Value, "unknown field %q; a template has name, version, description, parameters and components", k.Value)
		}
	}
	for _, req := range []string{"name", "version", "components"} {
		if seen[req] == nil {
			p.add(root, "", "missing required field %q", req)
		}
	}
	if t.Name != "" && !validName(t.Name) {
		p.add(seen["name"], "name", "%q is not a valid template name (lowercase letters, digits and '-', starting with a letter)", t.Name)
	}
	if c := t.Components; c != nil {
		if c.Kind != yaml.SequenceNode || len(c.Content) == 0 {
			p.add(c, "components", "must be a list of at least one component")
		} else {
			p.placeholders(t, c, "components")
		}
	}
	if len(p.ps) == 0 {
		if err := t.compile(); err != nil {
			p.add(seen["parameters"], "parameters", "%v", err)
		}
	}
	if len(p.ps) == 0 {
		for i := range t.Params {
			pr := &t.Params[i]
			if pr.Default == nil {
				continue
			}
			if errs := t.check(map[string]any{pr.Name: pr.Default}, true); len(errs) > 0 {
				p.ps = append(p.ps, problem(file, pr.defLine, pr.defCol, fmt.Sprintf("parameters[%d].default", i), "default "+errs[0].Message))
			}
		}
	}
	if len(p.ps) > 0 {
		return nil, p.ps
	}
	return t, nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func (p *parser) str(v *yaml.Node, path string) string {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		p.add(v, path, "must be a string")
		return ""
	}
	return v.Value
}

func (p *parser) params(t *Template, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		if v.ShortTag() != "!!null" {
			p.add(v, "parameters", "must be a list of parameters, each with name and type")
		}
		return
	}
	for i, item := range v.Content {
		at := fmt.Sprintf("parameters[%d]", i)
		if item.Kind != yaml.MappingNode {
			p.add(item, at, "a parameter must be a map with name and type")
			continue
		}
		pr, defNode := p.paramFields(item, at)
		p.checkParam(t, item, at, &pr, defNode)
		t.Params = append(t.Params, pr)
	}
}

// paramFields reads the fields of the parameter item, at path at, and
// returns the parameter with its default's node, nil if it has none;
// the default's value is left to checkParam.
func (p *parser) paramFields(item *yaml.Node, at string) (Param, *yaml.Node) {
	pr := Param{Line: item.Line, Col: item.Column}
	var defNode *yaml.Node
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, val := item.Content[j], item.Content[j+1]
		switch k.Value {
		case "name":
			pr.Name = p.str(val, at+".name")
			pr.Line, pr.Col = val.Line, val.Column
		case "type":
			pr.Type = Type(p.str(val, at+".type"))
		case "description":
			pr.Description = p.str(val, at+".description")
		case "required":
			if val.ShortTag() != "!!bool" {
				p.add(val, at+".required", "must be true or false")
			}
			pr.Required = val.Value == "true"
		case "default":
			defNode = val
			pr.defLine, pr.defCol = val.Line, val.Column
		case "enum":
			if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
				p.add(val, at+".enum", "must be a list of values")
				continue
			}
			for _, e := range val.Content {
				ev, err := scalarValue(e)
				if err != nil {
					p.add(e, at+".enum", "%v", err)
					continue
				}
				pr.Enum = append(pr.Enum, ev)
			}
		case "minimum", "maximum":
			ev, err := scalarValue(val)
			n, ok := ev.(json.Number)
			if err != nil || !ok {
				p.add(val, at+"."+k.Value, "must be a number")
				continue
			}
			if k.Value == "minimum" {
				pr.Minimum = &n
			} else {
				pr.Maximum = &n
			}
		case "pattern":
			pr.Pattern = p.str(val, at+".pattern")
			if _, err := regexp.Compile(pr.Pattern); err != nil {
				p.add(val, at+".pattern", "invalid regular expression: %v", err)
			}
		default:
			p.add(k, at+"."+k.Value, "unknown field %q; a parameter has name, type, description, required, default, enum, minimum, maximum and pattern", k.Value)
		}
	}
	return pr, defNode
}

// checkParam checks the parameter pr, read from item at path at, against
// the parameters of t read before it and against its own fields, and
// sets its default from defNode.
func (p *parser) checkParam(t *Template, item *yaml.Node, at string, pr *Param, defNode *yaml.Node) {
	switch {
	case pr.Name == "":
		p.add(item, at, "a parameter needs a name")
	case !paramName.MatchString(pr.Name):
		p.add(item, at+".name", "%q is not a valid parameter name (letters, digits and _, not starting with a digit)", pr.Name)
	case t.Param(pr.Name) != nil:
		p.add(item, at+".name", "parameter %q is declared twice", pr.Name)
	}
	switch pr.Type {
	case String, Integer, Boolean, Number:
	case "":
		p.add(item, at, "parameter %q needs a type: string, integer, boolean or number", pr.Name)
	default:
		p.add(item, at+".type", "unknown type %q; use string, integer, boolean or number", pr.Type)
	}
	if (pr.Minimum != nil || pr.Maximum != nil) && pr.Type != Integer && pr.Type != Number {
		p.add(item, at, "minimum and maximum apply to integer and number parameters only")
	}
	if pr.Pattern != "" && pr.Type != String {
		p.add(item, at, "pattern applies to string parameters only")
	}
	if defNode != nil {
		dv, err := scalarValue(defNode)
		if err != nil {
			p.add(defNode, at+".default", "%v", err)
		} else if dv == nil {
			p.add(defNode, at+".default", "must not be empty")
		}
		pr.Default = dv
		if pr.Required && dv != nil {
			p.add(defNode, at+".default", "a required parameter takes no default; drop one of them")
		}
	}
	if !pr.Required && defNode == nil {
		p.add(item, at, "parameter %q needs a default, or required: true", pr.Name)
	}
}

// scalarValue converts a scalar node to a string, bool, json.Number or nil.
func scalarValue(n *yaml.Node) (any, error) {
	if n.Kind != yaml.ScalarNode {
		return nil, errors.New("must be a single value, not a map or a list")
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("invalid boolean %q", n.Value)
		}
		return b, nil
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("invalid number %q", n.Value)
		}
		if n.ShortTag() == "!!int" {
			var i int64
			if err := n.Decode(&i); err == nil {
				return json.Number(strconv.FormatInt(i, 10)), nil
			}
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "!!str":
		return n.Value, nil
	}
	return nil, fmt.Errorf("unsupported value %q", n.Value)
}

// piece is a literal text or a parameter reference of a scalar.
type piece struct {
	text  string
	param string // set for a placeholder
}

var placeholder = regexp.MustCompile(`^\$\{\{\s*params\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// Placeholder returns the placeholder text of a parameter.
func Placeholder(name string) string { return "${{ params." + name + " }}" }

// splitPlaceholders cuts s into literal text and placeholders; "$${{" is a
// literal "${{".
func splitPlaceholders(s string) ([]piece, error) {
	if !strings.Contains(s, "${{") {
		return nil, nil
	}
	var out []piece
	var lit strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${{"):
			lit.WriteString("${{")
			i += 4
		case strings.HasPrefix(s[i:], "${{"):
			m := placeholder.FindStringSubmatch(s[i:])
			if m == nil {
				end := strings.Index(s[i:], "}}")
				shown := s[i:]
				if end >= 0 {
					shown = s[i : i+end+2]
				}
				return nil, fmt.Errorf("%q is not a placeholder: write ${{ params.NAME }}, or $${{ for a literal ${{", shown)
			}
			if lit.Len() > 0 {
				out = append(out, piece{text: lit.String()})
				lit.Reset()
			}
			out = append(out, piece{param: m[1]})
			i += len(m[0])
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	if lit.Len() > 0 {
		out = append(out, piece{text: lit.String()})
	}
	return out, nil
}

// placeholders records the placeholders of every scalar under n and checks
// that they name declared parameters.
func (p *parser) placeholders(t *Template, n *yaml.Node, path string) {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		p.add(n, path, "anchors and aliases are not supported in templates; write the value out")
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				p.add(k, path, "merge keys (<<) are not supported in templates; write the values out")
				continue
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" && k.ShortTag() != "!!int" && k.ShortTag() != "!!bool" && k.ShortTag() != "!!float" {
				p.add(k, path, "a map key must be a plain string")
				continue
			}
			if strings.Contains(k.Value, "${{") {
				p.add(k, path, "placeholders go in values, not in keys")
				continue
			}
			p.placeholders(t, v, path+"."+k.Value)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p.placeholders(t, c, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		pieces, err := splitPlaceholders(n.Value)
		if err != nil {
			p.add(n, path, "%v", err)
			return
		}
		if pieces == nil {
			return
		}
		for _, pc := range pieces {
			if pc.param != "" && t.Param(pc.param) == nil {
				msg := fmt.Sprintf("unknown parameter %q", pc.param)
				if names := t.ParamNames(); len(names) > 0 {
					msg += "; the template declares " + strings.Join(names, ", ")
				} else {
					msg += "; the template declares no parameters"
				}
				p.add(n, path, "%s", msg)
				return
			}
		}
		t.refs[n] = pieces
	}
}

// Values returns the value of every parameter: the app's, else the default.
func (t *Template) Values(given map[string]any) map[string]any {
	out := make(map[string]any, len(t.Params))
	for _, p := range t.Params {
		if v, ok := given[p.Name]; ok {
			out[p.Name] = v
		} else if p.Default != nil {
			out[p.Name] = p.Default
		}
	}
	return out
}

// Expand returns a copy of the template's components with every
// placeholder replaced, and for each node that held placeholders the
// parameters it used. given must have passed Check. The nodes keep the
// template file's lines and columns.
func (t *Template) Expand(given map[string]any) (*yaml.Node, map[*yaml.Node][]string) {
	vals := t.Values(given)
	origins := map[*yaml.Node][]string{}
	var cp func(n *yaml.Node) *yaml.Node
	cp = func(n *yaml.Node) *yaml.Node {
		c := *n
		if len(n.Content) > 0 {
			c.Content = make([]*yaml.Node, len(n.Content))
			for i, x := range n.Content {
				c.Content[i] = cp(x)
			}
		}
		pieces, ok := t.refs[n]
		if !ok {
			return &c
		}
		var used []string
		for _, pc := range pieces {
			if pc.param != "" && !slices.Contains(used, pc.param) {
				used = append(used, pc.param)
			}
		}
		origins[&c] = used
		if len(pieces) == 1 && pieces[0].param != "" {
			pr := t.Param(pieces[0].param)
			c.Tag, c.Value = typedScalar(pr.Type, vals[pr.Name])
			c.Style = 0
			if c.Tag == "!!str" {
				c.Style = yaml.DoubleQuotedStyle
			}
			return &c
		}
		var b strings.Builder
		for _, pc := range pieces {
			if pc.param == "" {
				b.WriteString(pc.text)
			} else {
				b.WriteString(text(vals[pc.param]))
			}
		}
		c.Tag, c.Value, c.Style = "!!str", b.String(), yaml.DoubleQuotedStyle
		return &c
	}
	return cp(t.Components), origins
}

// typedScalar gives the tag and text of a parameter value of type typ.
func typedScalar(typ Type, v any) (tag, value string) {
	switch typ {
	case Integer:
		return "!!int", text(v)
	case Number:
		return "!!float", text(v)
	case Boolean:
		return "!!bool", text(v)
	}
	return "!!str", text(v)
}

// text formats a parameter value for use inside a string.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(v)); ok {
			if r.IsInt() {
				return r.Num().String()
			}
			f, _ := r.Float64()
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return string(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(v)
}

// ParamAt returns the parameter whose placeholder is the whole value at p
// in the template's components (p starts below components: [api] or [1],
// then keys), when there is one.
func (t *Template) ParamAt(p []any) (string, bool) {
	n := t.Components
	for _, seg := range p {
		switch n.Kind {
		case yaml.SequenceNode:
			idx := -1
			switch s := seg.(type) {
			case int:
				idx = s
			case string:
				for i, item := range n.Content {
					for j := 0; j+1 < len(item.Content); j += 2 {
						if item.Content[j].Value == "name" && item.Content[j+1].Value == s {
							idx = i
						}
					}
				}
			}
			if idx < 0 || idx >= len(n.Content) {
				return "", false
			}
			n = n.Content[idx]
		case yaml.MappingNode:
			key, _ := seg.(string)
			var next *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == key {
					next = n.Content[j+1]
				}
			}
			if next == nil {
				return "", false
			}
			n = next
		default:
			return "", false
		}
	}
	pieces := t.refs[n]
	if len(pieces) == 1 && pieces[0].param != "" {
		return pieces[0].param, true
	}
	return "", false
}
