package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/fleetwright/fleetwright/internal/hint"
	"github.com/fleetwright/fleetwright/schema"
)

// schemas holds the compiled JSON Schemas; compile them once per run.
type schemas struct {
	app, platform *jsonschema.Schema
	// fast holds the quick validity check of each schema (see fastSchema),
	// when it can judge that schema.
	fast map[*jsonschema.Schema]*fastSchema
	// props lists the properties each schema location allows, for
	// "did you mean" suggestions.
	props map[string][]string
}

func compileSchemas() (*schemas, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	s := &schemas{props: map[string][]string{}, fast: map[*jsonschema.Schema]*fastSchema{}}
	fast := map[string]*fastSchema{}
	for _, r := range []struct {
		id  string
		raw []byte
	}{{schema.AppID, schema.App}, {schema.PlatformID, schema.Platform}} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.raw))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", r.id, err)
		}
		if err := c.AddResource(r.id, doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", r.id, err)
		}
		collectProps(r.id, doc, s.props)
		if f, err := compileFastSchema(doc); err == nil {
			fast[r.id] = f
		}
	}
	var err error
	if s.app, err = c.Compile(schema.AppID); err != nil {
		return nil, err
	}
	if s.platform, err = c.Compile(schema.PlatformID); err != nil {
		return nil, err
	}
	for sch, id := range map[*jsonschema.Schema]string{s.app: schema.AppID, s.platform: schema.PlatformID} {
		if f := fast[id]; f != nil {
			s.fast[sch] = f
		}
	}
	return s, nil
}

// collectProps records, for the root and every $defs entry, its property names.
func collectProps(id string, doc any, out map[string][]string) {
	m, _ := doc.(map[string]any)
	add := func(loc string, def any) {
		dm, _ := def.(map[string]any)
		props, _ := dm["properties"].(map[string]any)
		for k := range props {
			out[loc] = append(out[loc], k)
		}
		slices.Sort(out[loc])
	}
	add(id+"#", m)
	defs, _ := m["$defs"].(map[string]any)
	for name, def := range defs {
		add(id+"#/$defs/"+name, def)
	}
}

// check validates doc against sch and reports every leaf failure.
func (s *schemas) check(sch *jsonschema.Schema, doc *Document, ps *Problems) {
	if f := s.fast[sch]; f != nil && f.valid(doc.Value) {
		return
	}
	err := sch.Validate(doc.Value)
	if err == nil {
		return
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		ps.Add(doc, nil, "%v", err)
		return
	}
	s.leaves(ve, doc, ps)
}

func (s *schemas) leaves(ve *jsonschema.ValidationError, doc *Document, ps *Problems) {
	// A oneOf over simple types (quantities) gets one message instead of one
	// per branch.
	if k, ok := ve.ErrorKind.(*kind.OneOf); ok && k.Subschemas == nil {
		path := toPath(ve.InstanceLocation)
		ps.Add(doc, path, "must be a quantity such as 100m, 0.5 or 128Mi")
		return
	}
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			s.leaves(c, doc, ps)
		}
		return
	}
	path := toPath(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		loc := strings.TrimSuffix(ve.SchemaURL, "/additionalProperties")
		for _, name := range k.Properties {
			msg := fmt.Sprintf("unknown field %q", name)
			if sug := suggest(name, s.props[loc]); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			} else if len(s.props[loc]) > 0 {
				msg += "; known fields: " + strings.Join(s.props[loc], ", ")
			}
			ps.AddKey(doc, path.Child(name), "%s", msg)
		}
	case *kind.Required:
		for _, name := range k.Missing {
			ps.Add(doc, path, "missing required field %q", name)
		}
	case *kind.Type:
		ps.Add(doc, path, "must be %s, not %s", hint.TypeName(strings.Join(k.Want, " or ")), hint.TypeName(k.Got))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		ps.Add(doc, path, "must be one of %s; got %s", strings.Join(want, ", "), display(k.Got))
	case *kind.Minimum:
		ps.Add(doc, path, "must be ≥ %s; got %s", hint.Number(k.Want), hint.Number(k.Got))
	case *kind.Maximum:
		ps.Add(doc, path, "must be ≤ %s; got %s", hint.Number(k.Want), hint.Number(k.Got))
	case *kind.MinLength:
		if k.Want == 1 {
			ps.Add(doc, path, "must not be empty")
		} else {
			ps.Add(doc, path, "must be at least %d characters long", k.Want)
		}
	case *kind.MaxLength:
		ps.Add(doc, path, "must be at most %d characters long; got %d", k.Want, k.Got)
	case *kind.MinItems:
		ps.Add(doc, path, "must have at least %d items", k.Want)
	case *kind.Pattern:
		last := ""
		if len(path) > 0 {
			last = fmt.Sprint(path[len(path)-1])
		}
		if last == "timeout" {
			ps.Add(doc, path, "%q is not a duration such as 90s, 15m or 1h30m", k.Got)
		} else {
			ps.Add(doc, path, "%q does not match %s", k.Got, k.Want)
		}
	default:
		ps.Add(doc, path, "%s", ve.ErrorKind.LocalizedString(message.NewPrinter(language.English)))
	}
}

func toPath(loc []string) Path {
	p := make(Path, 0, len(loc))
	for _, s := range loc {
		if i, err := strconv.Atoi(s); err == nil {
			p = append(p, i)
		} else {
			p = append(p, s)
		}
	}
	return p
}

func display(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
