package verify

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/fleetwright/fleetwright/internal/jsonfield"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// A fieldError is a field of an object that does not decode into its Go
// type.
type fieldError struct {
	path string
	n    *node // the value, or the key of an unknown field
	msg  string
}

// validateValue checks a node against a Go type the way Kubernetes decodes
// objects (sigs.k8s.io/json, strict and case-sensitive): unknown fields,
// values of the wrong JSON type, numbers out of range, and values that the
// type's own decoder refuses (quantities, durations, ...). It walks the
// node instead of decoding, so it reports every problem with its place and
// allocates little; TestValidateMatchesDecoder keeps it in step with the
// decoder.
func validateValue(n *node, t reflect.Type, path string, out *[]fieldError) {
	ti := typeInfoOf(t)
	if n == nil {
		return
	}
	if n.Kind == yamlx.ScalarNode && n.Tag == yamlx.NullTag && !ti.unmarshaler {
		return // null leaves any value unset
	}
	if ti.unmarshaler || ti.textUnmarshaler {
		validateCustom(n, t, ti, path, out)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		validateValue(n, t.Elem(), path, out)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			*out = append(*out, fieldError{path, n, "cannot be decoded into " + t.String()})
		}
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		validateScalar(n, t, path, out)
	case reflect.Slice, reflect.Array:
		validateList(n, t, path, out)
	case reflect.Map:
		validateMap(n, t, path, out)
	case reflect.Struct:
		if n.Kind != yamlx.MapNode {
			*out = append(*out, typeError(path, n, t))
			return
		}
		for i := 0; i < len(n.Kids); i += 2 {
			key := n.Kids[i].Str
			f, ok := ti.fields.Lookup(key)
			if !ok {
				*out = append(*out, fieldError{joinPath(path, key), n.Kids[i], "unknown field"})
				continue
			}
			validateValue(n.Kids[i+1], f.Type, joinPath(path, key), out)
		}
	default:
		*out = append(*out, fieldError{path, n, "cannot be decoded into " + t.String()})
	}
}

// validateCustom checks n against a type that decodes itself: its
// UnmarshalJSON, else its UnmarshalText of a string, says.
func validateCustom(n *node, t reflect.Type, ti *typeInfo, path string, out *[]fieldError) {
	v := reflect.New(t)
	var err error
	switch {
	case ti.unmarshaler:
		err = v.Interface().(json.Unmarshaler).UnmarshalJSON(yamlx.AppendJSON(nil, n))
	case n.Kind != yamlx.ScalarNode || n.Tag != yamlx.StrTag:
		*out = append(*out, typeError(path, n, t))
		return
	default:
		err = v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Str))
	}
	if err != nil {
		*out = append(*out, fieldError{path, n, err.Error()})
	}
}

// validateScalar checks n against a boolean, string or number type: its
// YAML type, and that a number fits.
func validateScalar(n *node, t reflect.Type, path string, out *[]fieldError) {
	var ok bool
	switch t.Kind() {
	case reflect.Bool:
		ok = n.Kind == yamlx.ScalarNode && n.Tag == yamlx.BoolTag
	case reflect.String:
		ok = n.Kind == yamlx.ScalarNode && n.Tag == yamlx.StrTag
	default:
		ok = isNumber(n)
	}
	if !ok {
		*out = append(*out, typeError(path, n, t))
		return
	}
	var err error
	what := "an integer"
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(n.Str, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(n.Str, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(n.Str, t.Bits())
		what = "a number"
	}
	if err != nil {
		*out = append(*out, fieldError{path, n, fmt.Sprintf("must be %s that fits %s, not %s", what, t.Kind(), n.Str)})
	}
}

// validateList checks n against a slice or array type: each item, as far
// as an array's length; a []byte is base64 text.
func validateList(n *node, t reflect.Type, path string, out *[]fieldError) {
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !typeInfoOf(t.Elem()).custom() {
		if n.Kind != yamlx.ScalarNode || n.Tag != yamlx.StrTag {
			*out = append(*out, typeError(path, n, t))
		} else if _, err := base64.StdEncoding.DecodeString(n.Str); err != nil {
			*out = append(*out, fieldError{path, n, "must be base64 data: " + err.Error()})
		}
		return
	}
	if n.Kind != yamlx.SeqNode {
		*out = append(*out, typeError(path, n, t))
		return
	}
	for i, item := range n.Kids {
		if t.Kind() == reflect.Array && i >= t.Len() {
			break
		}
		validateValue(item, t.Elem(), path+"["+strconv.Itoa(i)+"]", out)
	}
}

// validateMap checks n against a map type: each key of an integer key
// type, and each value.
func validateMap(n *node, t reflect.Type, path string, out *[]fieldError) {
	if n.Kind != yamlx.MapNode {
		*out = append(*out, typeError(path, n, t))
		return
	}
	kt := t.Key()
	for i := 0; i < len(n.Kids); i += 2 {
		key := n.Kids[i].Str
		if kt.Kind() != reflect.String && !typeInfoOf(kt).textUnmarshaler {
			var err error
			switch kt.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				_, err = strconv.ParseInt(key, 10, kt.Bits())
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				_, err = strconv.ParseUint(key, 10, kt.Bits())
			}
			if err != nil {
				*out = append(*out, fieldError{joinPath(path, key), n.Kids[i], "key must be an integer"})
			}
		}
		validateValue(n.Kids[i+1], t.Elem(), joinPath(path, key), out)
	}
}

func isNumber(n *node) bool {
	return n.Kind == yamlx.ScalarNode && (n.Tag == yamlx.IntTag || n.Tag == yamlx.FloatTag)
}

func typeError(path string, n *node, t reflect.Type) fieldError {
	return fieldError{path, n, fmt.Sprintf("must be %s, not %s", goTypeName(t), nodeTypeName(n))}
}

// typeInfo is what validation needs to know about a Go type.
type typeInfo struct {
	unmarshaler     bool // *T implements json.Unmarshaler
	textUnmarshaler bool // *T implements encoding.TextUnmarshaler
	// fields are a struct's JSON members, embedded structs' included. The
	// string option is not checked: no Kubernetes or Flux type uses it.
	fields *jsonfield.Struct
}

func (ti *typeInfo) custom() bool { return ti.unmarshaler || ti.textUnmarshaler }

var (
	typeInfos           sync.Map // reflect.Type → *typeInfo
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func typeInfoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	pt := reflect.PointerTo(t)
	ti := &typeInfo{
		unmarshaler:     pt.Implements(unmarshalerType),
		textUnmarshaler: pt.Implements(textUnmarshalerType),
	}
	if t.Kind() == reflect.Struct {
		ti.fields = jsonfield.Of(t)
	}
	typeInfos.Store(t, ti)
	return ti
}
