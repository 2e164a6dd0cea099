package jsonfield

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Field is one member of a struct's JSON object.
type Field struct {
	// Name is the member's key: the tag's name, else the Go field name.
	Name string
	// Index leads from the struct to the field through embedded structs,
	// as reflect.Value.FieldByIndex takes it.
	Index []int
	// Type is the field's Go type.
	Type reflect.Type
	// Tagged is set when Name comes from the json tag.
	Tagged bool
	// OmitEmpty and OmitZero are the tag's omitempty and omitzero.
	OmitEmpty, OmitZero bool
	// Quoted is the tag's string option on a field it applies to (a
	// boolean, number or string, or a pointer to one): the value is
	// written inside a JSON string.
	Quoted bool

	isZero func(reflect.Value) bool // the type's IsZero, for omitzero
}

// Struct is the table of one struct type.
type Struct struct {
	// Fields lists the members in the order encoding/json writes them.
	Fields []Field
	// Sorted lists the same members sorted by Name.
	Sorted []Field
	// Quoted is set when a member is Quoted.
	Quoted bool
	byName map[string]int // Name → position in Fields
}

var cache sync.Map // reflect.Type → *Struct

// Of returns the table of struct type t.
func Of(t reflect.Type) *Struct {
	if s, ok := cache.Load(t); ok {
		return s.(*Struct)
	}
	s, _ := cache.LoadOrStore(t, build(t))
	return s.(*Struct)
}

// Lookup returns the member named exactly name.
func (s *Struct) Lookup(name string) (*Field, bool) {
	i, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return &s.Fields[i], true
}

// Match returns the member a decoded key fills, as encoding/json finds it:
// the one named exactly key, else the first whose name equals key ignoring
// case.
func (s *Struct) Match(key string) (*Field, bool) {
	if f, ok := s.Lookup(key); ok {
		return f, true
	}
	for i := range s.Fields {
		if strings.EqualFold(s.Fields[i].Name, key) {
			return &s.Fields[i], true
		}
	}
	return nil, false
}

// Get returns the field of struct value v. It is false when a nil
// embedded pointer is on the way, and the member is then not written.
func (f *Field) Get(v reflect.Value) (reflect.Value, bool) {
	if len(f.Index) == 1 {
		return v.Field(f.Index[0]), true
	}
	for i, x := range f.Index {
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

// ErrUnexportedEmbed is Set's error for a nil embedded pointer to an
// unexported struct type, which a decoder cannot allocate.
var ErrUnexportedEmbed = errors.New("cannot set embedded pointer to unexported struct")

// Set returns the field of the settable struct value v for decoding into,
// allocating nil embedded pointers on the way as encoding/json does.
func (f *Field) Set(v reflect.Value) (reflect.Value, error) {
	if len(f.Index) == 1 {
		return v.Field(f.Index[0]), nil
	}
	for i, x := range f.Index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, ErrUnexportedEmbed
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// Omit reports whether the field's value fv is left out of the object
// (omitempty and empty, or omitzero and zero).
func (f *Field) Omit(fv reflect.Value) bool {
	if f.OmitEmpty && Empty(fv) {
		return true
	}
	if f.OmitZero {
		if f.isZero != nil {
			return f.isZero(fv)
		}
		return fv.IsZero()
	}
	return false
}

// Empty reports whether v is empty for omitempty: false, 0, a nil pointer
// or interface, or an array, map, slice or string of length zero.
func Empty(v reflect.Value) bool {
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

// candidate is a field found while walking the embedded structs.
type candidate struct {
	Field
	depth int
}

// build walks t and the structs it embeds level by level, shallowest
// first. A name found at several places goes to the shallowest field; at
// equal depth to the only tagged one; otherwise nobody gets it.
func build(t reflect.Type) *Struct {
	s := &Struct{byName: map[string]int{}}
	s.Sorted = dominant(candidates(t))
	s.Fields = slices.Clone(s.Sorted)
	slices.SortFunc(s.Fields, func(a, b Field) int { return slices.Compare(a.Index, b.Index) })
	for i, f := range s.Fields {
		s.byName[f.Name] = i
		s.Quoted = s.Quoted || f.Quoted
	}
	return s
}

// candidates lists every field of t and of the structs it embeds that
// could be a member, with its depth, level by level, shallowest first.
// A field of a struct embedded twice at one level is listed twice, so
// that it clashes with itself.
func candidates(t reflect.Type) []candidate {
	type level struct {
		t     reflect.Type
		index []int
	}
	var found []candidate
	next := []level{{t: t}}
	var count map[reflect.Type]int
	nextCount := map[reflect.Type]int{}
	visited := map[reflect.Type]bool{}
	for depth := 0; len(next) > 0; depth++ {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, l := range current {
			if visited[l.t] {
				continue
			}
			visited[l.t] = true
			for i := range l.t.NumField() {
				sf := l.t.Field(i)
				if !admit(sf) {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validName(name) {
					name = ""
				}
				index := append(slices.Clip(l.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					// Embedded: its fields belong to the next level.
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, level{t: ft, index: index})
					}
					continue
				}
				f := newField(sf, name, opts, index, ft)
				found = append(found, candidate{f, depth})
				if count[l.t] > 1 {
					// The struct is embedded twice at this level: its
					// fields clash with themselves.
					found = append(found, candidate{f, depth})
				}
			}
		}
	}
	return found
}

// newField is the member for the struct field sf at index, named name by
// its tag (or "" for its Go name), with the tag's options opts; ft is its
// type, a pointer's element for an unnamed pointer type.
func newField(sf reflect.StructField, name, opts string, index []int, ft reflect.Type) Field {
	f := Field{
		Name: name, Index: index, Type: sf.Type, Tagged: name != "",
		OmitEmpty: hasOption(opts, "omitempty"),
		OmitZero:  hasOption(opts, "omitzero"),
		Quoted:    hasOption(opts, "string") && quotable(ft.Kind()),
	}
	if f.Name == "" {
		f.Name = sf.Name
	}
	if f.OmitZero {
		f.isZero = zeroFunc(sf.Type)
	}
	return f
}

// dominant keeps, of the candidates for each name, the one that gets it:
// the shallowest, at equal depth the only tagged one; a name with no such
// one is nobody's. The result is sorted by name.
func dominant(found []candidate) []Field {
	slices.SortFunc(found, func(a, b candidate) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := cmp.Compare(a.depth, b.depth); c != 0 {
			return c
		}
		if a.Tagged != b.Tagged {
			if a.Tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.Index, b.Index)
	})
	var sorted []Field
	for i := 0; i < len(found); {
		j := i + 1
		for j < len(found) && found[j].Name == found[i].Name {
			j++
		}
		// found[i] is the best of its name; a second one as deep and as
		// tagged makes the name ambiguous.
		if j == i+1 || found[i+1].depth != found[i].depth || found[i+1].Tagged != found[i].Tagged {
			sorted = append(sorted, found[i].Field)
		}
		i = j
	}
	return sorted
}

// admit reports whether a struct field can be a member, or hold members:
// exported fields, and embedded structs even of unexported types.
func admit(sf reflect.StructField) bool {
	if sf.IsExported() {
		return true
	}
	if !sf.Anonymous {
		return false
	}
	t := sf.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// validName reports whether a tag's name may be used as a key: letters,
// digits and punctuation other than quotes, backslash and comma. Other
// names fall back to the Go field name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) {
			continue
		}
		return false
	}
	return true
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// zeroFunc returns how omitzero tests a value of type t when t has its own
// IsZero method (on the value or on its address); nil means
// reflect.Value.IsZero.
func zeroFunc(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil() || v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				c := reflect.New(v.Type()).Elem()
				c.Set(v)
				v = c
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return nil
}
