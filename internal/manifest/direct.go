package manifest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/jsonfield"
)

// The direct encoder writes a typed object as YAML straight from its Go
// value: no JSON text and no intermediate maps. It gives the same bytes as
// encoding the object's JSON form (generic + emitter); a test holds it to
// that. Values with their own MarshalJSON or MarshalText (quantities,
// durations, raw JSON) go through their JSON form.

// item is one key of a mapping about to be written.
type item struct {
	name string
	v    reflect.Value
	g    any  // set when the value came through a marshaler
	isG  bool // g is the value
	s    string
	isS  bool // s is the value (a string in a map of strings)
}

// resolve follows pointers and interfaces and applies marshalers. It
// returns the concrete value, or a generic one, and whether the result is
// null (to be left out).
func resolve(v reflect.Value) (reflect.Value, any, bool, bool, error) {
	for {
		if !v.IsValid() {
			return v, nil, false, true, nil
		}
		if m, ok := marshaler(v); ok && (v.Kind() != reflect.Pointer || !v.IsNil()) {
			g, err := m()
			return v, g, true, g == nil, err
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return v, nil, false, true, nil
			}
			v = v.Elem()
			continue
		case reflect.Map, reflect.Slice:
			if v.IsNil() {
				return v, nil, false, true, nil
			}
		}
		return v, nil, false, false, nil
	}
}

// structItems lists the keys of a struct value that are written, in order.
func (e *emitter) structItems(v reflect.Value, top bool, inMeta bool) ([]item, error) {
	fs := jsonfield.Of(v.Type()).Sorted
	start := len(e.scratch)
	for i := range fs {
		f := &fs[i]
		if top && f.Name == "status" || inMeta && f.Name == "creationTimestamp" {
			continue
		}
		fv, ok := f.Get(v)
		if !ok || f.Omit(fv) {
			continue
		}
		if f.Quoted {
			g, err := quoted(fv)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			if g != nil {
				e.scratch = append(e.scratch, item{name: f.Name, g: g, isG: true})
			}
			continue
		}
		rv, g, isG, null, err := resolve(fv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if null {
			continue
		}
		e.scratch = append(e.scratch, item{name: f.Name, v: rv, g: g, isG: isG})
	}
	return e.scratch[start:], nil
}

func (e *emitter) mapItems(v reflect.Value) ([]item, error) {
	t := v.Type()
	if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String && marshalKindOf(t.Key()) == marshalNone &&
		marshalKindOf(t.Elem()) == marshalNone && marshalKindOf(reflect.PointerTo(t.Elem())) == marshalNone {
		// Labels, annotations, data: read in place, without a copy of each
		// key and value.
		start := len(e.scratch)
		k, val := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		for it := v.MapRange(); it.Next(); {
			k.SetIterKey(it)
			val.SetIterValue(it)
			e.scratch = append(e.scratch, item{name: k.String(), s: val.String(), isS: true})
		}
		out := e.scratch[start:]
		slices.SortFunc(out, func(a, b item) int { return strings.Compare(a.name, b.name) })
		return out, nil
	}
	out := make([]item, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		k, err := mapKey(it.Key())
		if err != nil {
			return nil, err
		}
		rv, g, isG, null, err := resolve(it.Value())
		if err != nil {
			return nil, err
		}
		if null {
			continue
		}
		out = append(out, item{name: k, v: rv, g: g, isG: isG})
	}
	slices.SortFunc(out, func(a, b item) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// pop drops the items listed since mark; structItems lists them on a stack
// that nested values reuse, instead of a new slice per struct.
func (e *emitter) pop(mark int) {
	clear(e.scratch[mark:])
	e.scratch = e.scratch[:mark]
}

// items lists the entries of a struct or map value.
func (e *emitter) items(v reflect.Value, top, inMeta bool) ([]item, error) {
	if v.Kind() == reflect.Struct {
		return e.structItems(v, top, inMeta)
	}
	return e.mapItems(v)
}

// appendDirect writes a typed object.
func (e *emitter) appendDirect(v reflect.Value) error {
	rv, g, isG, null, err := resolve(v)
	if err != nil {
		return err
	}
	if isG || null || (rv.Kind() != reflect.Struct && rv.Kind() != reflect.Map) {
		return fmt.Errorf("manifest: object must encode to a map, got %s", v.Type())
	}
	_ = g
	mark := len(e.scratch)
	defer e.pop(mark)
	its, err := e.items(rv, true, false)
	if err != nil {
		return err
	}
	return e.directMapping(its, 0, false, "")
}

func (e *emitter) directMapping(its []item, ind int, inline bool, path string) error {
	if len(its) == 0 {
		e.b.WriteString("{}\n")
		return nil
	}
	for i, it := range its {
		if i > 0 || !inline {
			e.indent(ind)
		}
		if len(it.name) > 500 {
			e.b.WriteString("? ")
			e.scalarString(it.name)
			e.b.WriteByte('\n')
			e.indent(ind)
		} else {
			e.scalarString(it.name)
		}
		e.b.WriteByte(':')
		if err := e.directValue(it, ind, path, it.name); err != nil {
			return err
		}
	}
	return nil
}

// directValue writes what follows "key:".
func (e *emitter) directValue(it item, ind int, path, name string) error {
	if it.isS {
		e.b.WriteByte(' ')
		e.scalarString(it.s)
		e.b.WriteByte('\n')
		return nil
	}
	if it.isG {
		// Only Helm values keep their nulls; the path matters only there.
		e.value(it.g, ind, path+"/"+name)
		return nil
	}
	v := it.v
	switch v.Kind() {
	case reflect.Struct, reflect.Map:
		mark := len(e.scratch)
		defer e.pop(mark)
		sub, err := e.items(v, false, path == "" && name == "metadata")
		if err != nil {
			return err
		}
		if len(sub) == 0 {
			e.b.WriteString(" {}\n")
			return nil
		}
		e.b.WriteByte('\n')
		return e.directMapping(sub, ind+1, false, childPath(path, name))
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			e.b.WriteByte(' ')
			e.scalarString(base64.StdEncoding.EncodeToString(v.Bytes()))
			e.b.WriteByte('\n')
			return nil
		}
		if v.Len() == 0 {
			e.b.WriteString(" []\n")
			return nil
		}
		e.b.WriteByte('\n')
		return e.directSequence(v, ind, childPath(path, name))
	}
	e.b.WriteByte(' ')
	if err := e.directScalar(v); err != nil {
		return err
	}
	e.b.WriteByte('\n')
	return nil
}

// childPath keeps paths only as deep as keepNull looks.
func childPath(path, name string) string {
	if len(path) > 16 {
		return path
	}
	return path + "/" + name
}

func (e *emitter) directSequence(l reflect.Value, ind int, path string) error {
	for i := range l.Len() {
		rv, g, isG, null, err := resolve(l.Index(i))
		if err != nil {
			return err
		}
		e.indent(ind)
		switch {
		case null:
			e.b.WriteString("- null\n")
		case isG:
			e.b.WriteString("- ")
			switch g := g.(type) {
			case map[string]any:
				if countKept(g, path) == 0 {
					e.b.WriteString("{}\n")
				} else {
					e.mapping(g, ind+1, true, path)
				}
			case []any:
				if len(g) == 0 {
					e.b.WriteString("[]\n")
				} else {
					e.b.Truncate(e.b.Len() - 1)
					e.b.WriteByte('\n')
					e.sequence(g, ind+1, path)
				}
			default:
				e.scalar(g)
				e.b.WriteByte('\n')
			}
		case rv.Kind() == reflect.Struct || rv.Kind() == reflect.Map:
			e.b.WriteString("- ")
			mark := len(e.scratch)
			sub, err := e.items(rv, false, false)
			if err == nil {
				err = e.directMapping(sub, ind+1, true, path)
			}
			e.pop(mark)
			if err != nil {
				return err
			}
		case (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && !(rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8):
			if rv.Len() == 0 {
				e.b.WriteString("- []\n")
				continue
			}
			e.b.WriteString("-\n")
			if err := e.directSequence(rv, ind+1, path); err != nil {
				return err
			}
		default:
			e.b.WriteString("- ")
			if rv.Kind() == reflect.Slice {
				e.scalarString(base64.StdEncoding.EncodeToString(rv.Bytes()))
			} else if err := e.directScalar(rv); err != nil {
				return err
			}
			e.b.WriteByte('\n')
		}
	}
	return nil
}

func (e *emitter) directScalar(v reflect.Value) error {
	switch v.Kind() {
	case reflect.String:
		e.scalarString(v.String())
	case reflect.Bool:
		e.b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return err
		}
		e.b.Write(b)
	default:
		return fmt.Errorf("cannot encode %s", v.Type())
	}
	return nil
}
