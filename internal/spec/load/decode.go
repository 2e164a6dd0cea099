package load

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/fleetwright/fleetwright/internal/jsonfield"
	"github.com/fleetwright/fleetwright/internal/spec"
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

// stringDecoder is implemented by the spec's own JSON types whose
// UnmarshalJSON of a JSON string just keeps the string: decoding a string
// into them skips the JSON text, which cost a tenth of reading a spec.
type stringDecoder interface {
	UnmarshalString(s string)
}

// The spec's types that take a string as it is.
var _ = [...]stringDecoder{(*spec.Quantity)(nil), (*spec.IntOrPercent)(nil)}

var stringDecoderType = reflect.TypeFor[stringDecoder]()

// decodePlan is what decodeValue needs of a type, found once per type.
type decodePlan struct {
	// unmarshaler is set when a pointer to the type (not itself a pointer)
	// implements json.Unmarshaler, and fromString when it is a
	// stringDecoder too.
	unmarshaler, fromString bool
	// fields is the member table of a struct type.
	fields *jsonfield.Struct
}

var plans sync.Map // reflect.Type → *decodePlan

func planOf(t reflect.Type) *decodePlan {
	if p, ok := plans.Load(t); ok {
		return p.(*decodePlan)
	}
	p := &decodePlan{}
	if t.Kind() != reflect.Pointer {
		pt := reflect.PointerTo(t)
		p.unmarshaler = pt.Implements(unmarshalerType)
		p.fromString = p.unmarshaler && pt.Implements(stringDecoderType)
	}
	if t.Kind() == reflect.Struct {
		p.fields = jsonfield.Of(t)
	}
	got, _ := plans.LoadOrStore(t, p)
	return got.(*decodePlan)
}

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
	plan := planOf(dst.Type())
	if plan.unmarshaler && dst.CanAddr() {
		return decodeUnmarshaler(src, dst, plan)
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
		return decodeStruct(src, dst, plan.fields)
	case reflect.Map:
		return decodeMap(src, dst)
	case reflect.Slice:
		return decodeSlice(src, dst)
	}
	return decodeScalar(src, dst)
}

// decodeUnmarshaler gives src to the UnmarshalJSON of dst, as its JSON
// text unless dst takes a string as it is.
func decodeUnmarshaler(src any, dst reflect.Value, plan *decodePlan) bool {
	// encoding/json writes invalid UTF-8 as replacement characters: such
	// strings go through the JSON text.
	if s, ok := src.(string); ok && plan.fromString && utf8.ValidString(s) {
		dst.Addr().Interface().(stringDecoder).UnmarshalString(s)
		return true
	}
	b, err := json.Marshal(src)
	if err != nil {
		return false
	}
	return dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b) == nil
}

// decodeStruct fills the members of dst that the keys of src name.
func decodeStruct(src any, dst reflect.Value, fs *jsonfield.Struct) bool {
	m, ok := src.(map[string]any)
	if !ok {
		return false
	}
	if fs.Quoted {
		return decodeJSON(src, dst)
	}
	all := true
	for k, v := range m {
		f, ok := fs.Lookup(k)
		if !ok {
			// A key that names no member exactly, which nearly no spec
			// has: decode again the way encoding/json meets the keys.
			// Members filled so far are filled again from the same
			// values, so what they got first does not show.
			return decodeFolded(m, fs, dst)
		}
		if !decodeField(v, f, dst) {
			all = false
		}
	}
	return all
}

// decodeMap fills map dst, whose keys are strings, from the entries of src.
func decodeMap(src any, dst reflect.Value) bool {
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
}

// decodeSlice sets dst to a new slice of the items of src.
func decodeSlice(src any, dst reflect.Value) bool {
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
}

// decodeScalar stores a string, boolean or number into dst.
func decodeScalar(src any, dst reflect.Value) bool {
	switch dst.Kind() {
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
	}
	n, ok := src.(json.Number)
	if !ok {
		return false
	}
	switch dst.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || dst.OverflowInt(i) {
			return false
		}
		dst.SetInt(i)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || dst.OverflowUint(u) {
			return false
		}
		dst.SetUint(u)
		return true
	case reflect.Float32, reflect.Float64:
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
