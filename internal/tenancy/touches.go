package tenancy

import (
	"strconv"
	"strings"
)

// Touches reports whether a decoded patch (a list of JSON 6902 operations,
// or a strategic merge patch's object) names a field of an object (a path
// such as spec.rules[0].host; "" for the object, which every patch
// touches): an operation whose path or from is the field, above it or
// below it; a merge patch that holds it or a map above it.
func Touches(patch any, field string) bool {
	if field == "" {
		return true
	}
	ptr := Pointer(field)
	switch p := patch.(type) {
	case []any:
		for _, item := range p {
			m, _ := item.(map[string]any)
			for _, k := range []string{"path", "from"} {
				op, _ := m[k].(string)
				if op != "" && (op == ptr || strings.HasPrefix(ptr, op+"/") || strings.HasPrefix(op, ptr+"/")) {
					return true
				}
			}
		}
	case map[string]any:
		var cur any = p
		for _, part := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				return true // a list or value above the field
			}
			next, ok := m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
			if !ok {
				return false
			}
			cur = next
		}
		return true
	}
	return false
}

// Pointer turns a field path (spec.containers[0].image) into a JSON pointer
// (/spec/containers/0/image).
func Pointer(field string) string {
	var b strings.Builder
	for _, part := range strings.Split(strings.ReplaceAll(field, "[", ".["), ".") {
		if part == "" {
			continue
		}
		if i, err := strconv.Atoi(strings.Trim(part, "[]")); err == nil && strings.HasPrefix(part, "[") {
			b.WriteString("/" + strconv.Itoa(i))
			continue
		}
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(part, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
