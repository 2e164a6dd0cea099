package charts

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
)

// FuzzParseIndex: a chart repository's index.yaml comes from outside;
// reading it and picking a version never panics.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nentries:\n  webcache:\n  - version: 1.0.0\n    urls: [webcache-1.0.0.tgz]\n    digest: abc\n"), "webcache", "1.x")
	f.Add([]byte("entries: {a: [{version: '1'}, {version: 2.0.0, urls: []}]}"), "a", "")
	f.Add([]byte("entries: [1, 2]"), "a", ">=1")
	f.Fuzz(func(t *testing.T, b []byte, chart, version string) {
		idx, err := ParseIndex(b)
		if err != nil {
			return
		}
		if e, err := idx.entry(chart, version); err == nil && len(e.URLs) == 0 {
			t.Errorf("entry %q %q has no URL", chart, version)
		}
	})
}

// FuzzSplitObjects: a chart's rendered templates and CRD files come from
// outside; splitting them into objects never panics, and every object it
// returns has a kind.
func FuzzSplitObjects(f *testing.F) {
	f.Add("apiVersion: v1\nkind: Service\n---\n# comment\n---\nkind: ConfigMap\n")
	f.Add("--- # x\n: : :\n")
	f.Add("---\n- a\n- b\n")
	f.Fuzz(func(t *testing.T, text string) {
		objs, err := splitObjects("f.yaml", text)
		if err != nil {
			return
		}
		for _, o := range objs {
			if _, ok := o["kind"].(string); !ok {
				t.Errorf("an object without a kind: %v", o)
			}
		}
	})
}

// FuzzRender: a chart archive comes from outside; loading and rendering it
// fails with an error, never a panic.
func FuzzRender(f *testing.F) {
	for _, v := range []string{"1.0.0", "2.1.0"} {
		f.Add(golden.PackChart(f, filepath.Join("testdata", "charts", "webcache-"+v), "webcache"))
	}
	f.Add([]byte("\x1f\x8b\x08\x00not a tar"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rel := review.Release{Name: "r", Namespace: "ns", Values: map[string]any{"replicas": 2.0}}
		out, err := Render(context.Background(), b, rel)
		if err == nil && out.Chart == "" {
			t.Error("rendered a chart with no name")
		}
	})
}
