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
	if ti.unmarshaler {
		v := reflect.New(t)
		if err := v.Interface().(json.Unmarshaler).UnmarshalJSON(yamlx.AppendJSON(nil, n)); err != nil {
			*out = append(*out, fieldError{path, n, err.Error()})
		}
		return
	}
	if ti.textUnmarshaler {
		if n.Kind != yamlx.ScalarNode || n.Tag != yamlx.StrTag {
			*out = append(*out, typeError(path, n, t))
			return
		}
		v := reflect.New(t)
		if err := v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Str)); err != nil {
			*out = append(*out, fieldError{path, n, err.Error()})
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		validateValue(n, t.Elem(), path, out)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			*out = append(*out, fieldError{path, n, "cannot be decoded into " + t.String()})
		}
	case reflect.Bool:
		if n.Kind != yamlx.ScalarNode || n.Tag != yamlx.BoolTag {
			*out = append(*out, typeError(path, n, t))
		}
	case reflect.String:
		if n.Kind != yamlx.ScalarNode || n.Tag != yamlx.StrTag {
			*out = append(*out, typeError(path, n, t))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !isNumber(n) {
			*out = append(*out, typeError(path, n, t))
		} else if _, err := strconv.ParseInt(n.Str, 10, t.Bits()); err != nil {
			*out = append(*out, fieldError{path, n, fmt.Sprintf("must be an integer that fits %s, not %s", t.Kind(), n.Str)})
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !isNumber(n) {
			*out = append(*out, typeError(path, n, t))
		} else if _, err := strconv.ParseUint(n.Str, 10, t.Bits()); err != nil {
			*out = append(*out, fieldError{path, n, fmt.Sprintf("must be an integer that fits %s, not %s", t.Kind(), n.Str)})
		}
	case reflect.Float32, reflect.Float64:
		if !isNumber(n) {
			*out = append(*out, typeError(path, n, t))
		} else if _, err := strconv.ParseFloat(n.Str, t.Bits()); err != nil {
			*out = append(*out, fieldError{path, n, fmt.Sprintf("must be a number that fits %s, not %s", t.Kind(), n.Str)})
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !typeInfoOf(t.Elem()).custom() {
			// []byte is base64 text.
			if n.Kind != yamlx.ScalarNode || n.Tag != yamlx.StrTag {
				*out = append(*out, typeError(path, n, t))
			} else if _, err := base64.StdEncoding.DecodeString(n.Str); err != nil {
				*out = append(*out, fieldError{path, n, "must be base64 data: " + err.Error()})
			}
			return
		}
		fallthrough
	case reflect.Array:
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
	case reflect.Map:
		if n.Kind != yamlx.MapNode {
			*out = append(*out, typeError(path, n, t))
			return
		}
		kt := t.Key()
		for i := 0; i < len(n.Kids); i += 2 {
			key := n.Kids[i].Str
			if kt.Kind() != reflect.String && !typeInfoOf(kt).textUnmarshaler {
				switch kt.Kind() {
				case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
					if _, err := strconv.ParseInt(key, 10, kt.Bits()); err != nil {
						*out = append(*out, fieldError{joinPath(path, key), n.Kids[i], "key must be an integer"})
					}
				case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
					if _, err := strconv.ParseUint(key, 10, kt.Bits()); err != nil {
						*out = append(*out, fieldError{joinPath(path, key), n.Kids[i], "key must be an integer"})
					}
				}
			}
			validateValue(n.Kids[i+1], t.Elem(), joinPath(path, key), out)
		}
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
