package spec

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"github.com/fleetwright/fleetwright/internal/jsonfield"
)

// decode fills v from the document's generic value, as encoding/json would
// from the same value marshalled: keys are matched to the members jsonfield
// lists (exactly, else ignoring case), values of the wrong type are left
// empty (the schema check has reported them already), numbers in interface
// values become float64 and types with their own UnmarshalJSON get their
// JSON.
// It walks the value directly instead of going through JSON text, which
// cost more than parsing the YAML.
func decode(doc *Document, v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	decodeValue(doc.Value, rv.Elem())
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodeValue stores src into dst (settable). It reports whether src had
// the right type; on false dst is left as it was.
func decodeValue(src any, dst reflect.Value) bool {
	if src == nil {
		// null leaves values as they are and empties pointers, maps and
		// slices, as encoding/json does.
		switch dst.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			dst.SetZero()
		}
		return true
	}
	if dst.CanAddr() && dst.Kind() != reflect.Pointer && dst.Addr().Type().Implements(unmarshalerType) {
		b, err := json.Marshal(src)
		if err != nil {
			return false
		}
		return dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b) == nil
	}
	switch dst.Kind() {
	case reflect.Pointer:
		elem := reflect.New(dst.Type().Elem())
		ok := decodeValue(src, elem.Elem())
		// encoding/json allocates the pointer before it finds a mismatch.
		dst.Set(elem)
		return ok
	case reflect.Interface:
		if dst.NumMethod() != 0 {
			return false
		}
		dst.Set(reflect.ValueOf(plainJSON(src)))
		return true
	case reflect.Struct:
		m, ok := src.(map[string]any)
		if !ok {
			return false
		}
		fs := jsonfield.Of(dst.Type())
		if fs.Quoted {
			return decodeJSON(src, dst)
		}
		if !allFields(m, fs) {
			return decodeFolded(m, fs, dst)
		}
		all := true
		for k, v := range m {
			f, _ := fs.Lookup(k)
			if !decodeField(v, f, dst) {
				all = false
			}
		}
		return all
	case reflect.Map:
		m, ok := src.(map[string]any)
		if !ok || dst.Type().Key().Kind() != reflect.String {
			return false
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMapWithSize(dst.Type(), len(m)))
		}
		all := true
		et := dst.Type().Elem()
		for k, v := range m {
			e := reflect.New(et).Elem()
			if !decodeValue(v, e) {
				all = false
			}
			dst.SetMapIndex(reflect.ValueOf(k).Convert(dst.Type().Key()), e)
		}
		return all
	case reflect.Slice:
		l, ok := src.([]any)
		if !ok {
			return false
		}
		s := reflect.MakeSlice(dst.Type(), len(l), len(l))
		all := true
		for i, v := range l {
			if !decodeValue(v, s.Index(i)) {
				all = false
			}
		}
		dst.Set(s)
		return all
	case reflect.String:
		s, ok := src.(string)
		if ok {
			dst.SetString(s)
		}
		return ok
	case reflect.Bool:
		b, ok := src.(bool)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := src.(json.Number)
		if !ok {
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || dst.OverflowInt(i) {
			return false
		}
		dst.SetInt(i)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := src.(json.Number)
		if !ok {
			return false
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || dst.OverflowUint(u) {
			return false
		}
		dst.SetUint(u)
		return true
	case reflect.Float32, reflect.Float64:
		n, ok := src.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), dst.Type().Bits())
		if err != nil || dst.OverflowFloat(f) {
			return false
		}
		dst.SetFloat(f)
		return true
	}
	return false
}

// decodeField decodes v into the member f of struct dst.
func decodeField(v any, f *jsonfield.Field, dst reflect.Value) bool {
	fv, err := f.Set(dst)
	if err != nil {
		return false // encoding/json skips the member too
	}
	return decodeValue(v, fv)
}

// decodeJSON decodes src into dst through its JSON text. Structs with a
// member of the string option go this way: no spec type has one, and
// encoding/json's handling of a bad quoted value (it stops decoding) is
// not worth copying.
func decodeJSON(src any, dst reflect.Value) bool {
	b, err := json.Marshal(src)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, dst.Addr().Interface()) == nil
}

// allFields reports whether every key of m names a member exactly, as in
// nearly every spec.
func allFields(m map[string]any, fs *jsonfield.Struct) bool {
	for k := range m {
		if _, ok := fs.Lookup(k); !ok {
			return false
		}
	}
	return true
}

// decodeFolded decodes a map whose keys may match members only ignoring
// case, or not at all, the way encoding/json meets them in marshalled
// JSON: keys sorted, so that when two keys match one member the same one
// wins.
func decodeFolded(m map[string]any, fs *jsonfield.Struct, dst reflect.Value) bool {
	keys := slices.Sorted(maps.Keys(m))
	all := true
	for _, k := range keys {
		if f, found := fs.Match(k); found && !decodeField(m[k], f, dst) {
			all = false
		}
	}
	return all
}

// plainJSON returns v as encoding/json decodes it into an interface value:
// numbers as float64, maps and lists copied.
func plainJSON(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return string(v)
		}
		return f
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = plainJSON(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = plainJSON(x)
		}
		return l
	}
	return v
}
