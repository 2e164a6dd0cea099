package load

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastSchema answers one question quickly: is a document valid against a
// JSON Schema? It knows the keywords the generated spec schemas use (type,
// properties, additionalProperties, required, items, minItems, enum,
// minimum, maximum, minLength, maxLength, pattern, oneOf, $ref into $defs)
// and nothing else: a schema with any other keyword gets no fast schema at
// all. A document it finds invalid, or cannot judge, goes to the full
// validator, which alone writes the problems; nearly every document is
// valid, and those skip the full validator's bookkeeping. FuzzFastSchema
// checks that the two agree.
type fastSchema struct {
	types      []string // empty: any
	props      map[string]*fastSchema
	additional *fastSchema // nil: allowed
	noExtra    bool        // additionalProperties: false
	required   []string
	items      *fastSchema
	minItems   int
	enum       []any
	minimum    *big.Rat
	maximum    *big.Rat
	minLen     int
	maxLen     int // -1: none
	pattern    *regexp.Regexp
	oneOf      []*fastSchema
	ref        string
	defs       map[string]*fastSchema // root only
	root       *fastSchema
}

// annotations are keywords that do not affect validity.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$defs": true, "title": true, "description": true,
	"examples": true, "default": true, "$comment": true,
}

// compileFastSchema builds the fast schema of a decoded schema document, or
// returns an error when it uses a keyword the fast schema does not know.
func compileFastSchema(doc any) (*fastSchema, error) {
	root := &fastSchema{}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	root.defs = map[string]*fastSchema{}
	if defs, ok := m["$defs"].(map[string]any); ok {
		for name, d := range defs {
			s, err := compileFastNode(d, root)
			if err != nil {
				return nil, fmt.Errorf("$defs/%s: %w", name, err)
			}
			root.defs[name] = s
		}
	}
	if err := fillFastNode(root, m, root); err != nil {
		return nil, err
	}
	return root, nil
}

func compileFastNode(v any, root *fastSchema) (*fastSchema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	s := &fastSchema{}
	return s, fillFastNode(s, m, root)
}

func fillFastNode(s *fastSchema, m map[string]any, root *fastSchema) error {
	s.root, s.maxLen = root, -1
	for k, v := range m {
		if err := s.fillKeyword(k, v); err != nil {
			return err
		}
	}
	return nil
}

// fillKeyword reads one keyword of the schema object into s.
func (s *fastSchema) fillKeyword(k string, v any) error {
	var err error
	switch k {
	case "type":
		if t, ok := v.(string); ok {
			s.types = []string{t}
			return nil
		}
		if _, ok := v.([]any); !ok {
			return fmt.Errorf("type: unexpected %T", v)
		}
		s.types, err = schemaStrings(k, v)
	case "properties":
		return s.fillProperties(v)
	case "additionalProperties":
		if b, ok := v.(bool); ok {
			s.noExtra = !b
			return nil
		}
		s.additional, err = compileFastNode(v, s.root)
	case "required":
		s.required, err = schemaStrings(k, v)
	case "items":
		s.items, err = compileFastNode(v, s.root)
	case "minItems":
		s.minItems, err = schemaInt(v)
	case "minLength":
		s.minLen, err = schemaInt(v)
	case "maxLength":
		s.maxLen, err = schemaInt(v)
	case "minimum":
		s.minimum, err = schemaRat(k, v)
	case "maximum":
		s.maximum, err = schemaRat(k, v)
	case "enum":
		return s.fillEnum(v)
	case "pattern":
		str, _ := v.(string)
		s.pattern, err = regexp.Compile(str)
	case "oneOf":
		return s.fillOneOf(v)
	case "$ref":
		ref, _ := v.(string)
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			return fmt.Errorf("$ref %q: only #/$defs/ references are supported", ref)
		}
		s.ref = name
	default:
		if !annotations[k] {
			return fmt.Errorf("keyword %q is not supported", k)
		}
	}
	return err
}

func (s *fastSchema) fillProperties(v any) error {
	pm, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("properties: not an object")
	}
	s.props = make(map[string]*fastSchema, len(pm))
	for name, p := range pm {
		var err error
		if s.props[name], err = compileFastNode(p, s.root); err != nil {
			return fmt.Errorf("properties/%s: %w", name, err)
		}
	}
	return nil
}

func (s *fastSchema) fillEnum(v any) error {
	l, ok := v.([]any)
	if !ok {
		return fmt.Errorf("enum: not a list")
	}
	for _, x := range l {
		if _, ok := x.(string); !ok {
			return fmt.Errorf("enum: only strings are supported")
		}
	}
	s.enum = l
	return nil
}

func (s *fastSchema) fillOneOf(v any) error {
	l, ok := v.([]any)
	if !ok {
		return fmt.Errorf("oneOf: not a list")
	}
	for _, x := range l {
		sub, err := compileFastNode(x, s.root)
		if err != nil {
			return err
		}
		s.oneOf = append(s.oneOf, sub)
	}
	return nil
}

// schemaStrings reads the list of strings that keyword k holds.
func schemaStrings(k string, v any) ([]string, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a list", k)
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		str, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%s: not a string", k)
		}
		out = append(out, str)
	}
	return out, nil
}

// schemaRat reads the number that keyword k holds, exactly.
func schemaRat(k string, v any) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(fmt.Sprint(v))
	if !ok {
		return nil, fmt.Errorf("%s: not a number", k)
	}
	return r, nil
}

func schemaInt(v any) (int, error) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.Atoi(string(n))
		return i, err
	case float64:
		return int(n), nil
	}
	return 0, fmt.Errorf("not an integer: %v", v)
}

// valid reports whether v is valid: true only when it surely is.
func (s *fastSchema) valid(v any) bool {
	if s.ref != "" {
		d, ok := s.root.defs[s.ref]
		if !ok || !d.valid(v) {
			return false
		}
	}
	if len(s.types) > 0 && !s.typeOK(v) {
		return false
	}
	if s.enum != nil {
		str, ok := v.(string)
		if !ok {
			return false
		}
		found := false
		for _, e := range s.enum {
			if e == str {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if len(s.oneOf) > 0 {
		n := 0
		for _, sub := range s.oneOf {
			if sub.valid(v) {
				n++
			} else if !sub.surelyInvalid(v) {
				return false
			}
		}
		if n != 1 {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for _, r := range s.required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		for k, x := range v {
			if p, ok := s.props[k]; ok {
				if !p.valid(x) {
					return false
				}
			} else if s.noExtra {
				return false
			} else if s.additional != nil && !s.additional.valid(x) {
				return false
			}
		}
	case []any:
		if len(v) < s.minItems {
			return false
		}
		if s.items != nil {
			for _, x := range v {
				if !s.items.valid(x) {
					return false
				}
			}
		}
	case string:
		if s.minLen > 0 || s.maxLen >= 0 {
			n := utf8.RuneCountInString(v)
			if n < s.minLen || (s.maxLen >= 0 && n > s.maxLen) {
				return false
			}
		}
		if s.pattern != nil && !s.pattern.MatchString(v) {
			return false
		}
	case json.Number:
		if s.minimum != nil || s.maximum != nil {
			if ok, sure := s.intInBounds(string(v)); sure {
				return ok
			}
			r, ok := new(big.Rat).SetString(string(v))
			if !ok || (s.minimum != nil && r.Cmp(s.minimum) < 0) || (s.maximum != nil && r.Cmp(s.maximum) > 0) {
				return false
			}
		}
	}
	return true
}

// intInBounds compares an integer with the bounds without a big.Rat, when
// the number and the bounds are all integers that fit in an int64.
func (s *fastSchema) intInBounds(text string) (ok, sure bool) {
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return false, false
	}
	for _, b := range []*big.Rat{s.minimum, s.maximum} {
		if b != nil && (!b.IsInt() || !b.Num().IsInt64()) {
			return false, false
		}
	}
	if s.minimum != nil && n < s.minimum.Num().Int64() {
		return false, true
	}
	if s.maximum != nil && n > s.maximum.Num().Int64() {
		return false, true
	}
	return true, true
}

// surelyInvalid reports whether v fails s for a reason valid can be sure
// of: its type. oneOf needs the other branches to fail for certain.
func (s *fastSchema) surelyInvalid(v any) bool {
	if s.ref != "" || len(s.types) == 0 || s.typeOK(v) {
		return false
	}
	_, isNumber := v.(json.Number)
	return !isNumber || !slices.Contains(s.types, "integer") // 1e3 is an integer too
}

func (s *fastSchema) typeOK(v any) bool {
	for _, t := range s.types {
		switch t {
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "null":
			if v == nil {
				return true
			}
		case "number":
			if _, ok := v.(json.Number); ok {
				return true
			}
		case "integer":
			if n, ok := v.(json.Number); ok && isIntegerText(string(n)) {
				return true
			}
		}
	}
	return false
}

// isIntegerText matches -?[0-9]+. Numbers such as 1e3 are integers too in
// JSON Schema, but the converter writes integral values without an
// exponent below 1e21; beyond, the full validator decides.
func isIntegerText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
