// Package docpath names a location in a YAML or JSON document: the path
// that problems point at and that edits take, written one way everywhere.
package docpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path locates a value in a document: map keys (string), list indexes
// (int) and list items selected by their name field (ByName).
type Path []any

// ByName selects the item of a list whose name field equals it, as
// components[api] selects the component named api.
type ByName string

// String formats the path as components[1].workload_spec.port, or
// components[api]… with ByName. Keys that are not plain words are written
// as ['key'], so that every path reads back with Parse (a ByName is
// written as it is: it names a component, a container or an env entry).
func (p Path) String() string {
	b := make([]byte, 0, 48)
	for _, s := range p {
		switch s := s.(type) {
		case int:
			b = append(strconv.AppendInt(append(b, '['), int64(s), 10), ']')
		case ByName:
			b = append(append(append(b, '['), s...), ']')
		case string:
			if !plainKey(s) {
				b = append(append(append(b, "['"...), quoteKey.Replace(s)...), "']"...)
				continue
			}
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, s...)
		default:
			b = fmt.Appendf(b, "[%v]", s)
		}
	}
	return string(b)
}

// Child returns p extended by s, without aliasing p.
func (p Path) Child(s any) Path {
	q := make(Path, len(p), len(p)+1)
	copy(q, p)
	return append(q, s)
}

// quoteKey escapes a key written inside ['…'].
var quoteKey = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Parse reads a path written as a small JSONPath: an optional leading
// "$" or "$.", keys separated by dots, [N] for a list index, [name] for the
// list item whose name field is name, and ['key'] or ["key"] for a key
// holding dots or brackets:
//
//	components[api].workload_spec.image
//	$.components[1].addon_spec.values['app.kubernetes.io/name']
func Parse(s string) (Path, error) {
	orig := s
	s = strings.TrimPrefix(s, "$")
	s = strings.TrimPrefix(s, ".")
	if s == "" {
		return nil, fmt.Errorf("path %q is empty", orig)
	}
	var p Path
	for s != "" {
		if s[0] == '[' {
			seg, rest, err := bracket(s)
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", orig, err)
			}
			p = append(p, seg)
			s = rest
		} else {
			i := strings.IndexAny(s, ".[")
			if i < 0 {
				i = len(s)
			}
			if i == 0 {
				return nil, fmt.Errorf("path %q: empty key", orig)
			}
			p = append(p, s[:i])
			s = s[i:]
		}
		if strings.HasPrefix(s, ".") {
			s = s[1:]
			if s == "" || s[0] == '.' || s[0] == '[' {
				return nil, fmt.Errorf("path %q: empty key", orig)
			}
		} else if s != "" && s[0] != '[' {
			return nil, fmt.Errorf("path %q: unexpected %q", orig, s)
		}
	}
	return p, nil
}

func bracket(s string) (any, string, error) {
	if len(s) >= 2 && (s[1] == '\'' || s[1] == '"') {
		q := s[1]
		var b strings.Builder
		for i := 2; i < len(s); i++ {
			switch {
			case s[i] == '\\' && i+1 < len(s):
				b.WriteByte(s[i+1])
				i++
			case s[i] == q:
				if i+1 >= len(s) || s[i+1] != ']' {
					return nil, "", errors.New("a quoted key must be followed by ]")
				}
				return b.String(), s[i+2:], nil
			default:
				b.WriteByte(s[i])
			}
		}
		return nil, "", errors.New("unterminated quoted key")
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return nil, "", errors.New("missing ]")
	}
	inner := strings.TrimSpace(s[1:end])
	if inner == "" {
		return nil, "", errors.New("empty []")
	}
	if n, err := strconv.Atoi(inner); err == nil {
		if n < 0 {
			return nil, "", errors.New("negative index")
		}
		return n, s[end+1:], nil
	}
	return ByName(inner), s[end+1:], nil
}
