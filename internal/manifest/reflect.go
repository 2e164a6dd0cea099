package manifest

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// toGeneric turns a typed object into the maps, lists and scalars that
// encoding/json would produce for it, without writing and reading JSON text:
// field names and omitempty/omitzero/inline come from the json tags, and
// types with their own MarshalJSON or MarshalText use it.
func toGeneric(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	t := v.Type()
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if m, ok := marshaler(v); ok {
			return m()
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		if t.Kind() == reflect.Pointer {
			if m, ok := marshaler(v); ok {
				return m()
			}
		}
		return toGeneric(v.Elem())
	case reflect.Struct:
		fields := structFields(t)
		out := make(map[string]any, len(fields))
		for _, f := range fields {
			fv, ok := fieldByIndex(v, f.index)
			if !ok {
				continue
			}
			if (f.omitEmpty && isEmpty(fv)) || (f.omitZero && fv.IsZero()) {
				continue
			}
			g, err := toGeneric(fv)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			if g == nil && (fv.Kind() == reflect.Map || fv.Kind() == reflect.Slice) {
				// nil maps and slices are null in JSON; keep the key.
				out[f.name] = nil
				continue
			}
			out[f.name] = g
		}
		return out, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			k, err := mapKey(it.Key())
			if err != nil {
				return nil, err
			}
			g, err := toGeneric(it.Value())
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes()), nil
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			g, err := toGeneric(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return nil, err
		}
		return json.Number(b), nil
	}
	return nil, fmt.Errorf("cannot encode %s", t)
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

type marshalKind uint8

const (
	marshalNone marshalKind = iota
	marshalJSON
	marshalText
)

var marshalCache sync.Map // reflect.Type → marshalKind

func marshalKindOf(t reflect.Type) marshalKind {
	if k, ok := marshalCache.Load(t); ok {
		return k.(marshalKind)
	}
	k := marshalNone
	switch {
	case t.Implements(jsonMarshalerType):
		k = marshalJSON
	case t.Implements(textMarshalerType):
		k = marshalText
	}
	marshalCache.Store(t, k)
	return k
}

var marshalPairCache sync.Map // reflect.Type → [2]marshalKind

// marshalKinds returns how t and *t marshal themselves.
func marshalKinds(t reflect.Type) (self, ptr marshalKind) {
	if k, ok := marshalPairCache.Load(t); ok {
		p := k.([2]marshalKind)
		return p[0], p[1]
	}
	p := [2]marshalKind{marshalKindOf(t), marshalNone}
	if t.Kind() != reflect.Pointer {
		p[1] = marshalKindOf(reflect.PointerTo(t))
	}
	marshalPairCache.Store(t, p)
	return p[0], p[1]
}

// marshaler returns a function that encodes v through its own MarshalJSON
// or MarshalText, when it has one (on the value, or on its address, as
// encoding/json does).
func marshaler(v reflect.Value) (func() (any, error), bool) {
	try := func(x reflect.Value) (func() (any, error), bool) {
		switch marshalKindOf(x.Type()) {
		case marshalJSON:
			return func() (any, error) {
				b, err := x.Interface().(json.Marshaler).MarshalJSON()
				if err != nil {
					return nil, err
				}
				if s, ok := simpleJSONString(b); ok {
					return s, nil // quantities and the like: no decoder needed
				}
				dec := json.NewDecoder(bytes.NewReader(b))
				dec.UseNumber()
				var g any
				err = dec.Decode(&g)
				return g, err
			}, true
		case marshalText:
			return func() (any, error) {
				b, err := x.Interface().(encoding.TextMarshaler).MarshalText()
				return string(b), err
			}, true
		}
		return nil, false
	}
	self, ptr := marshalKinds(v.Type())
	if self == marshalNone && (v.Kind() == reflect.Pointer || ptr == marshalNone) {
		return nil, false // the common case, with one cache lookup
	}
	if f, ok := try(v); ok {
		return f, true
	}
	if v.Kind() == reflect.Pointer || ptr == marshalNone {
		return nil, false
	}
	if v.CanAddr() {
		return try(v.Addr())
	}
	// Not addressable: copy it so the pointer method can run.
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return try(p)
}

// simpleJSONString returns the string that b encodes when b is a quoted
// JSON string without escapes.
func simpleJSONString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	for _, c := range b[1 : len(b)-1] {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return "", false
		}
	}
	return string(b[1 : len(b)-1]), true
}

func mapKey(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		b, err := tm.MarshalText()
		return string(b), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("unsupported map key %s", k.Type())
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

type field struct {
	name                string
	index               []int
	omitEmpty, omitZero bool
}

var fieldCache sync.Map // reflect.Type → []field

// structFields lists a struct's JSON fields, embedded and inline fields
// flattened, as encoding/json sees them.
func structFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var out []field
	seen := map[string]bool{}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if name == "" && (sf.Anonymous || strings.Contains(","+opts+",", ",inline,")) && ft.Kind() == reflect.Struct {
				walk(ft, idx)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if seen[name] {
				continue // the shallower field wins, as in encoding/json
			}
			seen[name] = true
			out = append(out, field{
				name: name, index: idx,
				omitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
				omitZero:  strings.Contains(","+opts+",", ",omitzero,"),
			})
		}
	}
	walk(t, nil)
	fieldCache.Store(t, out)
	return out
}

// fieldByIndex follows index through embedded pointers; ok is false when a
// nil embedded pointer is on the way.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}
