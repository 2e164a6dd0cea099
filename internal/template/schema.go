package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/hint"
)

// ParamError is a problem with the parameters an app gives a template.
type ParamError struct {
	// Param is the parameter concerned; "" for the parameters as a whole.
	Param string
	// Unknown is set when the app gives a parameter the template lacks.
	Unknown bool
	Message string
}

func (e ParamError) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return "parameter " + e.Param + ": " + e.Message
}

type propSchema struct {
	Type        Type         `json:"type"`
	Description string       `json:"description,omitempty"`
	Enum        []any        `json:"enum,omitempty"`
	Minimum     *json.Number `json:"minimum,omitempty"`
	Maximum     *json.Number `json:"maximum,omitempty"`
	Pattern     string       `json:"pattern,omitempty"`
	Default     any          `json:"default,omitempty"`
}

// Schema returns the JSON Schema of the template's parameters: an object
// with one typed property per parameter, the required ones listed, and no
// other property.
func (t *Template) Schema() ([]byte, error) {
	props := make(map[string]propSchema, len(t.Params))
	required := []string{}
	for _, p := range t.Params {
		props[p.Name] = propSchema{Type: p.Type, Description: p.Description, Enum: p.Enum, Minimum: p.Minimum, Maximum: p.Maximum, Pattern: p.Pattern, Default: p.Default}
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return json.MarshalIndent(map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"title":                "parameters of template " + t.Name,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}, "", "  ")
}

func (t *Template) compile() error {
	raw, err := t.Schema()
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	id := "https://fleetwright.dev/templates/" + t.Name + "/parameters.schema.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(id, doc); err != nil {
		return err
	}
	s, err := c.Compile(id)
	if err != nil {
		return fmt.Errorf("building the parameters' schema: %w", err)
	}
	t.schema = s
	return nil
}

// Check validates the parameters an app gives (a map of strings, bools and
// json.Number, as decoded from its spec) against the template's schema.
func (t *Template) Check(given map[string]any) []ParamError {
	return t.check(given, false)
}

func (t *Template) check(given map[string]any, partial bool) []ParamError {
	if given == nil {
		given = map[string]any{}
	}
	err := t.schema.Validate(given)
	if err == nil {
		return nil
	}
	var out []ParamError
	for _, e := range diag.Schema(err) {
		param := ""
		if len(e.Path) > 0 {
			param = e.Path[0]
		}
		switch k := e.Kind.(type) {
		case *kind.Required:
			if partial {
				continue
			}
			msg := fmt.Sprintf("missing required parameter %q", e.Name)
			if p := t.Param(e.Name); p != nil && p.Description != "" {
				msg += " (" + p.Description + ")"
			}
			out = append(out, ParamError{Param: e.Name, Message: msg})
		case *kind.AdditionalProperties:
			msg := fmt.Sprintf("template %s has no parameter %q", t.Name, e.Name)
			names := t.ParamNames()
			if sug := suggest(e.Name, names); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			} else if len(names) > 0 {
				msg += "; it takes " + strings.Join(names, ", ")
			}
			out = append(out, ParamError{Param: e.Name, Unknown: true, Message: msg})
		case *kind.Enum:
			// Parameters are typed: quote the choices to show their type.
			want := make([]string, len(k.Want))
			for i, w := range k.Want {
				want[i] = diag.Display(w)
			}
			out = append(out, ParamError{Param: param, Message: fmt.Sprintf("must be one of %s; got %s", strings.Join(want, ", "), diag.Display(k.Got))})
		default:
			out = append(out, ParamError{Param: param, Message: e.Message})
		}
	}
	slices.SortStableFunc(out, func(a, b ParamError) int { return strings.Compare(a.Param, b.Param) })
	return out
}

// suggest returns the candidate closest to s when it is close enough.
func suggest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+1
	for _, c := range candidates {
		if d := hint.Distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
