package charts

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
)

// BenchmarkRender loads and renders a small chart (6 templates, a CRD) from
// its archive in memory: the cost of one side of one release, fetching
// aside.
func BenchmarkRender(b *testing.B) {
	archive := golden.PackChart(b, filepath.Join("testdata", "charts", "webcache-2.1.0"), "webcache")
	rel := review.Release{Name: "web-cache", Namespace: "shop", Values: map[string]any{"replicas": 3.0}}
	for b.Loop() {
		out, err := Render(context.Background(), archive, rel)
		if err != nil || len(out.Objects) != 3 {
			b.Fatal(out, err)
		}
	}
}
