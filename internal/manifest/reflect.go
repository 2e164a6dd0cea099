package manifest

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/fleetwright/fleetwright/internal/jsonfield"
)

// toGeneric turns a typed object into the maps, lists and scalars that
// encoding/json would produce for it, without writing and reading JSON text:
// the members of structs and their options come from jsonfield, and types
// with their own MarshalJSON or MarshalText use it.
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
		return structToGeneric(v)
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		return mapToGeneric(v)
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes()), nil
		}
		return listToGeneric(v)
	case reflect.Array:
		return listToGeneric(v)
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

// structToGeneric is toGeneric of a struct: a map of the members
// encoding/json would write, by their JSON names.
func structToGeneric(v reflect.Value) (any, error) {
	fields := jsonfield.Of(v.Type()).Fields
	out := make(map[string]any, len(fields))
	for i := range fields {
		f := &fields[i]
		fv, ok := f.Get(v)
		if !ok || f.Omit(fv) {
			continue
		}
		if f.Quoted {
			g, err := quoted(fv)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			out[f.Name] = g
			continue
		}
		g, err := toGeneric(fv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if g == nil && (fv.Kind() == reflect.Map || fv.Kind() == reflect.Slice) {
			// nil maps and slices are null in JSON; keep the key.
			out[f.Name] = nil
			continue
		}
		out[f.Name] = g
	}
	return out, nil
}

// mapToGeneric is toGeneric of a map that is not nil: a map by the keys'
// JSON names.
func mapToGeneric(v reflect.Value) (any, error) {
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
}

// listToGeneric is toGeneric of an array, or of a slice that is neither
// nil nor of bytes: a list of its elements.
func listToGeneric(v reflect.Value) (any, error) {
	out := make([]any, v.Len())
	for i := range out {
		g, err := toGeneric(v.Index(i))
		if err != nil {
			return nil, err
		}
		out[i] = g
	}
	return out, nil
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
				if jsonInteger(b) {
					return json.Number(b), nil // an IntOrString's count: what the decoder gives
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

// jsonInteger reports whether b is a JSON integer: an optional minus and
// digits without a leading zero (or a lone 0).
func jsonInteger(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 1 && b[0] == '0' {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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

// quoted encodes the value of a field with the string option: a boolean,
// number or string is written as JSON text inside a string, unless its
// type encodes itself.
func quoted(v reflect.Value) (any, error) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, nil
		}
		if _, ok := marshaler(v); ok {
			return toGeneric(v)
		}
		v = v.Elem()
	}
	if _, ok := marshaler(v); ok {
		return toGeneric(v)
	}
	switch v.Kind() {
	case reflect.String:
		b, err := json.Marshal(v.String())
		return string(b), err
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	}
	g, err := toGeneric(v)
	if n, ok := g.(json.Number); ok {
		return string(n), err
	}
	return g, err
}
