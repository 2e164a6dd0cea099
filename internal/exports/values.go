package exports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// values reads Helm chart values the way chart templates see them: a dotted
// path walks nested maps, a missing key takes the chart's default, and a key
// set to null reads as empty (Helm drops such keys from the merged values).
type values struct {
	m map[string]any
}

// get returns the value at a dotted path and whether the path exists.
func (v values) get(path string) (any, bool) {
	var cur any = v.m
	for part := range strings.SplitSeq(path, ".") {
		switch m := cur.(type) {
		case map[string]any:
			next, ok := m[part]
			if !ok {
				return nil, false
			}
			cur = next
		case map[any]any:
			next, ok := m[part]
			if !ok {
				return nil, false
			}
			cur = next
		default:
			return nil, false
		}
	}
	return cur, true
}

// str returns the string at path, def when the path is absent. Scalars are
// formatted as Helm prints them; maps and lists are an error. Values that
// the chart passes through tpl cannot be evaluated here, so a value holding
// a template action is an error too.
func (v values) str(path, def string) (string, error) {
	x, ok := v.get(path)
	if !ok {
		return def, nil
	}
	s, err := scalarString(x)
	if err != nil {
		return "", fmt.Errorf("values %s: %w", path, err)
	}
	if strings.Contains(s, "{{") {
		return "", fmt.Errorf("values %s: template expressions are not supported here; write the literal value", path)
	}
	return s, nil
}

// firstStr returns the first non-empty string among paths (Helm's
// "if .Values.a … else if .Values.b" chains), or def when all are empty.
func (v values) firstStr(def string, paths ...string) (string, error) {
	for _, p := range paths {
		s, err := v.str(p, "")
		if err != nil {
			return "", err
		}
		if s != "" {
			return s, nil
		}
	}
	return def, nil
}

// truthy reports whether the value at path is true in a Helm "if": absent,
// null, false, zero, "" and empty collections are false.
func (v values) truthy(path string, def bool) bool {
	x, ok := v.get(path)
	if !ok {
		return def
	}
	return isTruthy(x)
}

// port returns the TCP port at path, def when the path is absent.
func (v values) port(path string, def int) (int, error) {
	x, ok := v.get(path)
	if !ok {
		return def, nil
	}
	p, err := toInt(x)
	if err != nil {
		return 0, fmt.Errorf("values %s: %w", path, err)
	}
	if p < 1 || p > 65535 {
		return 0, fmt.Errorf("values %s: port %d is out of range 1-65535", path, p)
	}
	return p, nil
}

// count returns the non-negative integer at path, def when the path is absent.
func (v values) count(path string, def int) (int, error) {
	x, ok := v.get(path)
	if !ok {
		return def, nil
	}
	n, err := toInt(x)
	if err != nil {
		return 0, fmt.Errorf("values %s: %w", path, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("values %s: must not be negative", path)
	}
	return n, nil
}

// strList returns the list of strings at path (empty when absent).
func (v values) strList(path string) ([]string, error) {
	x, ok := v.get(path)
	if !ok || x == nil {
		return nil, nil
	}
	list, ok := x.([]any)
	if !ok {
		if ss, isStrings := x.([]string); isStrings {
			return ss, nil
		}
		return nil, fmt.Errorf("values %s: want a list, got %T", path, x)
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, err := scalarString(e)
		if err != nil {
			return nil, fmt.Errorf("values %s[%d]: %w", path, i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func isTruthy(x any) bool {
	switch t := x.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case int:
		return t != 0
	case int64:
		return t != 0
	case int32:
		return t != 0
	case uint64:
		return t != 0
	case float64:
		return t != 0
	case float32:
		return t != 0
	case []any:
		return len(t) > 0
	case []string:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	case map[any]any:
		return len(t) > 0
	default:
		return true
	}
}

// scalarString formats a scalar as a Helm template prints it.
func scalarString(x any) (string, error) {
	switch t := x.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case bool:
		return strconv.FormatBool(t), nil
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case int32:
		return strconv.FormatInt(int64(t), 10), nil
	case uint64:
		return strconv.FormatUint(t, 10), nil
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			return strconv.FormatInt(int64(t), 10), nil
		}
		return strconv.FormatFloat(t, 'f', -1, 64), nil
	case float32:
		return scalarString(float64(t))
	default:
		return "", fmt.Errorf("want a scalar, got %T", x)
	}
}

func toInt(x any) (int, error) {
	switch t := x.(type) {
	case int:
		return t, nil
	case int64:
		if t > math.MaxInt32 || t < math.MinInt32 {
			return 0, fmt.Errorf("number %d is out of range", t)
		}
		return int(t), nil
	case int32:
		return int(t), nil
	case uint64:
		if t > math.MaxInt32 {
			return 0, fmt.Errorf("number %d is out of range", t)
		}
		return int(t), nil
	case float64:
		if t != math.Trunc(t) || t > math.MaxInt32 || t < math.MinInt32 {
			return 0, fmt.Errorf("want an integer, got %v", t)
		}
		return int(t), nil
	case float32:
		return toInt(float64(t))
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return 0, fmt.Errorf("want an integer, got %q", t)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("want an integer, got %T", x)
	}
}

// trunc63 is the charts' `trunc 63 | trimSuffix "-"`: cut to 63 bytes,
// then drop one trailing dash.
func trunc63(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.TrimSuffix(s, "-")
}

// fullname is the Bitnami common chart's "common.names.fullname"
// (bitnami/common/templates/_names.tpl): fullnameOverride when set, else the
// release name when it already contains the chart name (or nameOverride),
// else "<release>-<name>"; cut to 63 characters.
func fullname(v values, release, chart string) (string, error) {
	override, err := v.str("fullnameOverride", "")
	if err != nil {
		return "", err
	}
	if override != "" {
		return trunc63(override), nil
	}
	name, err := v.firstStr(chart, "nameOverride")
	if err != nil {
		return "", err
	}
	if strings.Contains(release, name) {
		return trunc63(release), nil
	}
	return trunc63(release + "-" + name), nil
}

// isDNSLabel reports whether s is a DNS-1123 label, the form of a Service name.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is a DNS-1123 subdomain, the form of a
// Secret name.
func isDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if !isDNSLabel(label) {
			return false
		}
	}
	return true
}

// isSecretKey reports whether s is a valid key of a Secret's data.
func isSecretKey(s string) bool {
	if s == "" || len(s) > 253 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
