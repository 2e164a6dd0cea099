package charts

import (
	"context"
	"testing"

	"github.com/fleetwright/fleetwright/internal/review"
)

// BenchmarkRender loads and renders a small chart (6 templates, a CRD) from
// its archive in memory: the cost of one side of one release, fetching
// aside.
func BenchmarkRender(b *testing.B) {
	archive := PackChart(b, "webcache-2.1.0")
	rel := review.Release{Name: "web-cache", Namespace: "shop", Values: map[string]any{"replicas": 3.0}}
	for b.Loop() {
		out, err := Render(context.Background(), archive, rel)
		if err != nil || len(out.Objects) != 3 {
			b.Fatal(out, err)
		}
	}
}
