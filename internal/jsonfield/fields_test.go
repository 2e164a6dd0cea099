package jsonfield

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The test types cover each rule of encoding/json's field table.

type tags struct {
	Plain     string
	Named     string `json:"named"`
	Dash      string `json:"-"`
	DashComma string `json:"-,"`
	Empty     string `json:",omitempty"`
	Zero      int    `json:"zero,omitzero"`
	Both      []int  `json:"both,omitempty,omitzero"`
	Quoted    int    `json:"quoted,string"`
	QuotedPtr *bool  `json:"qp,string"`
	NotQuoted []int  `json:"nq,string"`
	Invalid   string `json:"in'valid"`
	Spaced    string `json:"a b"`
	Punct     string `json:"$ref"`
	unexp     string
	Map       map[string]int `json:"map,omitempty"`
}

type Inner struct {
	A string
	B string `json:"b"`
	C string
}

type Other struct {
	A string
	B string
	D string `json:"C"`
}

type Deep struct{ Inner }

// conflicts: Inner.A and Other.A clash and vanish; Inner.b and Other.B
// differ in case and both stay; Other.D is tagged "C" and beats the
// untagged Inner.C.
type conflicts struct {
	Inner
	Other
	Own string
}

// shallow: the outer B hides Inner's; Deep's fields are one level deeper
// than Other's.
type shallow struct {
	B string
	Deep
	Other
}

type twice struct {
	Deep
	*Deep2
}

type Deep2 struct{ Inner }

type Name string

type unexportedInner struct{ U, V string }

type embeds struct {
	*Inner                   // a pointer, nil or not
	Name                     // an embedded non-struct
	unexportedInner          // unexported type, exported fields
	Tagged          Other    `json:"tagged"`
	Inline          Other    `json:",inline"` // a named field: not inlined
	Anon            struct{} `json:"anon,omitempty"`
}

type inlineEmbed struct {
	Inner `json:",inline"`
	X     int
}

type taggedEmbed struct {
	Inner `json:"inner"`
	X     int
}

type recursive struct {
	*recursive
	R int
}

type zeroer struct{ n int }

func (z zeroer) IsZero() bool { return z.n == 7 }

type ptrZeroer struct{ N int }

func (z *ptrZeroer) IsZero() bool { return z.N == 7 }

type zeros struct {
	V  zeroer     `json:"v,omitzero"`
	P  ptrZeroer  `json:"p,omitzero"`
	PP *ptrZeroer `json:"pp,omitzero"`
	T  time.Time  `json:"t,omitzero"`
	E  any        `json:"e,omitzero"`
}

type unexportedPtr struct {
	*unexportedInner
	X int
}

type folded struct {
	Key  int
	KEY  int `json:"kEY"`
	Kelv int `json:"\u212aelvin"`
}

var testTypes = []reflect.Type{
	reflect.TypeFor[tags](), reflect.TypeFor[conflicts](), reflect.TypeFor[shallow](),
	reflect.TypeFor[twice](), reflect.TypeFor[embeds](), reflect.TypeFor[inlineEmbed](),
	reflect.TypeFor[taggedEmbed](), reflect.TypeFor[recursive](), reflect.TypeFor[zeros](),
	reflect.TypeFor[unexportedPtr](), reflect.TypeFor[folded](), reflect.TypeFor[Deep](),
}

// fill sets every settable field reachable from v to a distinct value,
// allocating pointers.
func fill(v reflect.Value, n *int, depth int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 3 || !v.CanSet() {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n, depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(f, n, depth)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n, depth)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, n, depth)
		v.SetMapIndex(reflect.ValueOf("k"), e)
	}
}

// keys returns the members of a JSON object in order, with their values.
func keys(t *testing.T, data []byte) (names []string, values []string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", data)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		values = append(values, string(raw))
	}
	return names, values
}

// encoded returns what the table says encoding/json writes for v.
func encoded(t *testing.T, v reflect.Value) (names []string, values []string) {
	t.Helper()
	for _, f := range Of(v.Type()).Fields {
		fv, ok := f.Get(v)
		if !ok || f.Omit(fv) {
			continue
		}
		b, err := json.Marshal(fv.Interface())
		if err != nil {
			t.Fatal(err)
		}
		if f.Quoted && !(fv.Kind() == reflect.Pointer && fv.IsNil()) {
			b, _ = json.Marshal(string(b))
		}
		names = append(names, f.Name)
		values = append(values, string(b))
	}
	return names, values
}

// TestEncodeMatchesJSON: the members encoding/json writes, their order and
// their values, filled and empty, are the table's.
func TestEncodeMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, typ := range testTypes {
		t.Run(typ.Name(), func(t *testing.T) {
			t.Parallel()
			filled := reflect.New(typ).Elem()
			n := 0
			fill(filled, &n, 0)
			for _, v := range []reflect.Value{reflect.New(typ).Elem(), filled} {
				data, err := json.Marshal(v.Interface())
				if err != nil {
					t.Fatal(err)
				}
				wantNames, wantValues := keys(t, data)
				gotNames, gotValues := encoded(t, v)
				if d := cmp.Diff(wantNames, gotNames); d != "" {
					t.Errorf("names of %s (-json +table):\n%s", data, d)
				}
				if d := cmp.Diff(wantValues, gotValues); d != "" {
					t.Errorf("values of %s (-json +table):\n%s", data, d)
				}
			}
			if s := Of(typ); s != Of(typ) {
				t.Error("the table is not cached")
			}
		})
	}
}

// TestDecodeMatchesJSON: a key, in its own spelling and in other cases,
// fills the member that Match finds, through the path Set opens, as in
// encoding/json.
func TestDecodeMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, typ := range testTypes {
		t.Run(typ.Name(), func(t *testing.T) {
			t.Parallel()
			filled := reflect.New(typ).Elem()
			n := 0
			fill(filled, &n, 0)
			for _, f := range Of(typ).Fields {
				fv, ok := f.Get(filled)
				if !ok {
					continue
				}
				value, err := json.Marshal(fv.Interface())
				if err != nil {
					t.Fatal(err)
				}
				if f.Quoted {
					continue // the string option is the decoder's business
				}
				for _, key := range []string{f.Name, strings.ToUpper(f.Name), strings.ToLower(f.Name), "k" + f.Name} {
					doc, _ := json.Marshal(map[string]json.RawMessage{key: value})
					got := reflect.New(typ)
					jsonErr := json.Unmarshal(doc, got.Interface())
					want := reflect.New(typ)
					var setErr error
					if m, ok := Of(typ).Match(key); ok {
						var dst reflect.Value
						dst, setErr = m.Set(want.Elem())
						if setErr == nil {
							if err := json.Unmarshal(value, dst.Addr().Interface()); err != nil {
								setErr = err
							}
						}
					}
					if (jsonErr != nil) != (setErr != nil) {
						t.Errorf("%s: encoding/json says %v, the table %v", doc, jsonErr, setErr)
					}
					if d := cmp.Diff(got.Interface(), want.Interface(), cmp.Exporter(func(reflect.Type) bool { return true })); d != "" {
						t.Errorf("%s (-json +table):\n%s", doc, d)
					}
				}
			}
		})
	}
}

// The rules spelled out, so that a change to them shows here first.
func TestNames(t *testing.T) {
	t.Parallel()
	for typ, want := range map[reflect.Type][]string{
		reflect.TypeFor[tags]():          {"Plain", "named", "-", "Empty", "zero", "both", "quoted", "qp", "nq", "Invalid", "a b", "$ref", "map"},
		reflect.TypeFor[conflicts]():     {"b", "B", "C", "Own"},
		reflect.TypeFor[shallow]():       {"B", "b", "A", "C"},
		reflect.TypeFor[twice]():         {},
		reflect.TypeFor[embeds]():        {"A", "b", "C", "Name", "U", "V", "tagged", "Inline", "anon"},
		reflect.TypeFor[inlineEmbed]():   {"A", "b", "C", "X"},
		reflect.TypeFor[taggedEmbed]():   {"inner", "X"},
		reflect.TypeFor[recursive]():     {"R"},
		reflect.TypeFor[unexportedPtr](): {"U", "V", "X"},
	} {
		got := []string{}
		for _, f := range Of(typ).Fields {
			got = append(got, f.Name)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", typ, d)
		}
		sorted := Of(typ).Sorted
		for i := 1; i < len(sorted); i++ {
			if sorted[i-1].Name >= sorted[i].Name {
				t.Errorf("%s: Sorted is not sorted: %q before %q", typ, sorted[i-1].Name, sorted[i].Name)
			}
		}
	}
	f, _ := Of(reflect.TypeFor[tags]()).Lookup("quoted")
	if !f.Quoted {
		t.Error("quoted is not Quoted")
	}
	if f, _ := Of(reflect.TypeFor[tags]()).Lookup("nq"); f.Quoted {
		t.Error("the string option applies to a slice")
	}
	if _, err := (&Of(reflect.TypeFor[unexportedPtr]()).Fields[0]).Set(reflect.New(reflect.TypeFor[unexportedPtr]()).Elem()); !errors.Is(err, ErrUnexportedEmbed) {
		t.Errorf("Set through a nil unexported embedded pointer: %v", err)
	}
}
