package docpath_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/docpath"
)

// TestStringReadsBack: a path written by String reads back with Parse as
// the same path, keys holding dots, slashes, spaces or quotes included
// (a label key such as app.kubernetes.io/name was written as three keys).
func TestStringReadsBack(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path docpath.Path
		want string
	}{
		{docpath.Path{"components", 1, "workload_spec", "port"}, "components[1].workload_spec.port"},
		{docpath.Path{"components", docpath.ByName("api"), "image"}, "components[api].image"},
		{docpath.Path{"components", 0, "workload_spec", "pod", "labels", "app.kubernetes.io/name"},
			"components[0].workload_spec.pod.labels['app.kubernetes.io/name']"},
		{docpath.Path{"values", "bad key!", "x"}, "values['bad key!'].x"},
		{docpath.Path{"values", "it's"}, `values['it\'s']`},
		{docpath.Path{"env", 2, "value_from"}, "env[2].value_from"},
	} {
		if got := tt.path.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		back, err := docpath.Parse(tt.want)
		if err != nil || !reflect.DeepEqual(back, tt.path) {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", tt.want, back, err, tt.path)
		}
	}
}

// FuzzParse checks that whatever Parse reads, String writes so that Parse
// reads it back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a.b[1]", "$.components[api].x", "v['a.b/c'].d", `v["q'x"]`, "[0][1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := docpath.Parse(s)
		if err != nil || !names(p) {
			return
		}
		back, err := docpath.Parse(p.String())
		if err != nil || !reflect.DeepEqual(back, p) {
			t.Fatalf("Parse(%q) = %#v, written %q, read back %#v, %v", s, p, p.String(), back, err)
		}
	})
}

// names reports whether every ByName of p is a name as components have
// (letters, digits, '-' and '_', not a number): [name] has no quoting.
func names(p docpath.Path) bool {
	for _, s := range p {
		n, ok := s.(docpath.ByName)
		if !ok {
			continue
		}
		if _, err := strconv.Atoi(string(n)); err == nil || strings.Trim(string(n), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
			return false
		}
	}
	return true
}
