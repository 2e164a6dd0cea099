package load_test

import (
	"os"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// BenchmarkValidate10k loads and validates 10,000 apps of 3 components
// from disk.
func BenchmarkValidate10k(b *testing.B) { benchValidate(b, 10_000) }

func BenchmarkValidate1k(b *testing.B) { benchValidate(b, 1_000) }

func benchValidate(b *testing.B, n int) {
	dir := b.TempDir()
	if err := synth.Write(dir, n); err != nil {
		b.Fatal(err)
	}
	l := spectest.Loader(b)
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		before := synth.CPUTime()
		repo, ps := l.Load(os.DirFS(dir))
		cpu += synth.CPUTime() - before
		// The workers have no probes and no requests: two policy warnings
		// each, as verify gives their Deployments.
		if ps.HasErrors() || len(ps) != 2*n || len(repo.Apps) != n {
			b.Fatalf("%d apps, problems: %v", len(repo.Apps), ps)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "apps/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
