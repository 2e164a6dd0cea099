package render_test

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// BenchmarkLoad10k validates 10,000 apps of 3 components (no patches) from
// disk as render validate and render do: render.Load, the spec checks and
// the checks of patched components.
func BenchmarkLoad10k(b *testing.B) {
	dir := b.TempDir()
	if err := synth.Write(dir, 10_000); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		repo, ps, err := render.Load(b.Context(), render.Dir(dir))
		if err != nil || ps.HasErrors() || len(repo.Apps) != 10_000 {
			b.Fatalf("%v: %d apps, problems: %v", err, len(repo.Apps), ps)
		}
	}
	b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "apps/s")
}
