package load

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/fleetwright/fleetwright/internal/diag"
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
	for _, e := range diag.Schema(err) {
		path := toPath(e.Path)
		switch k := e.Kind.(type) {
		case *kind.OneOf:
			// The only oneOf over simple types is a quantity's.
			if k.Subschemas == nil {
				ps.Add(doc, path, "must be a quantity such as 100m, 0.5 or 128Mi")
				continue
			}
		case *kind.AdditionalProperties:
			loc := strings.TrimSuffix(e.SchemaURL, "/additionalProperties")
			msg := e.Message
			// A field the object already sets is not what the user meant
			// (ports beside port, env_from beside env).
			var unset []string
			set, _ := valueAt(doc.Value, path).(map[string]any)
			for _, p := range s.props[loc] {
				if _, has := set[p]; !has {
					unset = append(unset, p)
				}
			}
			if sug := suggest(e.Name, unset); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			} else if len(s.props[loc]) > 0 {
				msg += "; known fields: " + strings.Join(s.props[loc], ", ")
			}
			ps.AddKey(doc, path.Child(e.Name), "%s", msg)
			continue
		case *kind.Pattern:
			if len(path) > 0 && fmt.Sprint(path[len(path)-1]) == "timeout" {
				ps.Add(doc, path, "%q is not a duration such as 90s, 15m or 1h30m", k.Got)
				continue
			}
		}
		ps.Add(doc, path, "%s", e.Message)
	}
}

// valueAt returns the value at p in v, or nil.
func valueAt(v any, p Path) any {
	for _, step := range p {
		switch x := v.(type) {
		case map[string]any:
			k, _ := step.(string)
			v = x[k]
		case []any:
			i, ok := step.(int)
			if !ok || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
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
