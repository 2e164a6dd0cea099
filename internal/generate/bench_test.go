package generate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/fleet/sink"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// A full render: load and validate the specs from disk, generate, compare
// with the (empty) output folder and write every file.
func BenchmarkRender1k(b *testing.B)  { benchRender(b, 1_000) }
func BenchmarkRender10k(b *testing.B) { benchRender(b, 10_000) }

// The same with a source per component (fleet.artifacts): every component
// folder is also packed and digested (what render then pushes).
func BenchmarkRender10kArtifacts(b *testing.B) { benchRender(b, 10_000, withArtifacts) }

// The same apps in two environments (platform.yaml environments), both
// written by the render (neither has promote_from): twice the apps' files,
// with the environment label and each copy's release file. Compare with
// BenchmarkRender10k (docs/environments.md).
func BenchmarkRender10kTwoEnvironments(b *testing.B) { benchRender(b, 10_000, withEnvironments) }

// withEnvironments gives a synthetic repository two environments, staging
// on its cluster and production on a second one.
func withEnvironments(b *testing.B, src string) {
	p := filepath.Join(src, "platform.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	data = append(bytes.Replace(data, []byte("clusters: [{name: bench}]"), []byte("clusters: [{name: bench}, {name: bench-prod}]"), 1),
		"environments: [{name: staging, cluster: bench}, {name: production, cluster: bench-prod}]\n"...)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// A re-render over an unchanged fleet: everything but the writes, which
// must be none.
func BenchmarkRerenderNoop10k(b *testing.B) { benchNoop(b, 10_000) }
func BenchmarkRerenderNoop1k(b *testing.B)  { benchNoop(b, 1_000) }

// withArtifacts turns fleet.artifacts on in a synthetic repository.
func withArtifacts(b *testing.B, src string) {
	p := filepath.Join(src, "platform.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	data = append(data, "fleet: {artifacts: {repository: registry.bench.test/fleet}}\n"...)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

func benchRender(b *testing.B, n int, setup ...func(*testing.B, string)) {
	src := b.TempDir()
	if err := synth.Write(src, n); err != nil {
		b.Fatal(err)
	}
	for _, f := range setup {
		f(b, src)
	}
	var files int
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		out := filepath.Join(b.TempDir(), "fleet")
		before := synth.CPUTime()
		files = renderOnce(b, src, out, n)
		cpu += synth.CPUTime() - before
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/app")
	b.ReportMetric(float64(files)/float64(n), "files/app")
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.Sys)/(1<<20), "MiB-sys")
}

func benchNoop(b *testing.B, n int) {
	src := b.TempDir()
	if err := synth.Write(src, n); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "fleet")
	renderOnce(b, src, out, n)
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		before := synth.CPUTime()
		written := renderOnce(b, src, out, n)
		cpu += synth.CPUTime() - before
		if written != 0 {
			b.Fatalf("a no-op re-render wrote %d files", written)
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/app")
}

// renderOnce renders src into out and returns how many files it wrote.
func renderOnce(b testing.TB, src, out string, n int) int {
	repo := loadRepo(b, nil, src)
	if len(repo.Apps) != n*max(1, len(repo.Platform.Environments)) {
		b.Fatalf("%d apps", len(repo.Apps))
	}
	// As render does: the fleet index, kept beside the output folder here,
	// in the user's cache folder there.
	s := sink.NewIndexed(&sink.Dir{Root: out, Managed: layout.ManagedDirs(&repo.Platform)}, out+".index")
	f, err := generate.Render(repo, generate.Options{Reuse: s.Reuse})
	if err != nil {
		b.Fatal(err)
	}
	res, err := s.Land(context.Background(), f)
	if err != nil {
		b.Fatal(err)
	}
	if res.CacheErr != nil {
		b.Fatal(res.CacheErr)
	}
	if _, err := os.Stat(out); err != nil {
		b.Fatal(err)
	}
	return len(res.Changes)
}
