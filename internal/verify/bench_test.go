package verify

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/registry"
	"github.com/fleetwright/fleetwright/internal/registry/registrytest"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// Verifying the synthetic fleet: drift against the specs, every path built,
// every object validated, the secret and policy gates; no cluster.
func BenchmarkVerify1k(b *testing.B)  { benchVerify(b, 1_000, true, noArtifacts) }
func BenchmarkVerify10k(b *testing.B) { benchVerify(b, 10_000, true, noArtifacts) }

// The same without the drift check (no apps repository: no render).
func BenchmarkVerifyFleetOnly10k(b *testing.B) { benchVerify(b, 10_000, false, noArtifacts) }

// The fleet of artifacts (platform.yaml fleet.artifacts): every component's
// OCIRepository, and its artifact rebuilt from the folder and compared with
// the digest the fleet pins; each project's source, its artifact rebuilt
// from the project's Flux files, which its Kustomization's build reads;
// besides all of the above.
func BenchmarkVerifyArtifacts10k(b *testing.B)          { benchVerify(b, 10_000, true, offline) }
func BenchmarkVerifyArtifactsFleetOnly10k(b *testing.B) { benchVerify(b, 10_000, false, offline) }

// The same with every artifact looked up in a registry on loopback
// (--artifacts), each request held 1 ms as a nearby registry would.
func BenchmarkVerifyArtifactsRegistry10k(b *testing.B) { benchVerify(b, 10_000, false, inRegistry) }

type artifactMode int

const (
	noArtifacts artifactMode = iota
	offline
	inRegistry
)

func benchVerify(b *testing.B, n int, drift bool, mode artifactMode) {
	artifacts := mode != noArtifacts
	src := b.TempDir()
	if err := synth.Write(src, n); err != nil {
		b.Fatal(err)
	}
	repo := spectest.Load(b, src)
	var srv *registrytest.Server
	if mode == inRegistry {
		srv = registrytest.New(b, registrytest.Options{Delay: time.Millisecond})
	}
	if artifacts {
		repository := "registry.bench.test/fleet"
		if srv != nil {
			repository = srv.Host() + "/fleet"
		}
		repo.Platform.Fleet.Artifacts = &spec.FleetArtifacts{Repository: repository}
	}
	f, err := generate.Render(repo, generate.Options{Platform: &repo.Platform})
	if err != nil {
		b.Fatal(err)
	}
	pushed := 0 // the components' artifacts and the projects'
	if srv != nil {
		arts, err := f.Artifacts()
		if err != nil {
			b.Fatal(err)
		}
		pushed = len(arts)
		if _, err := artifact.Push(b.Context(), repo.Platform.Fleet.Artifacts.Repository, arts, artifact.PushOptions{Concurrency: 16}); err != nil {
			b.Fatal(err)
		}
	}
	out := filepath.Join(src, "fleet")
	plan, err := fleet.Compute(out, f.Map(), layout.ManagedDirs(&repo.Platform))
	if err != nil {
		b.Fatal(err)
	}
	if err := fleet.Apply(out, plan); err != nil {
		b.Fatal(err)
	}
	f = nil
	runtime.GC()
	opts := Options{FleetDir: out, FleetPath: repo.Platform.Fleet.Path, Platform: &repo.Platform}
	if drift {
		opts.Apps = &Apps{Repo: repo}
	}
	if srv != nil {
		opts.Registry = &RegistryCheck{Client: registry.New(registry.Options{}), Concurrency: 16}
	}
	var cpu time.Duration
	var rep *Report
	b.ResetTimer()
	for b.Loop() {
		before := synth.CPUTime()
		rep, err = Run(b.Context(), opts)
		if err != nil {
			b.Fatal(err)
		}
		cpu += synth.CPUTime() - before
	}
	b.StopTimer()
	if srv != nil && (rep.Stats.InRegistry != pushed || pushed <= 3*n) {
		b.Fatalf("%d artifacts found in the registry, want the %d pushed (3 components an app, and the projects')", rep.Stats.InRegistry, pushed)
	}
	if rep.Failed() || rep.Stats.Objects < 9*n {
		b.Fatalf("unexpected report: %d errors, %d objects: %v", rep.Count(SeverityError), rep.Stats.Objects, rep.Findings[:min(5, len(rep.Findings))])
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/app")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(rep.Stats.Objects), "objects")
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.Sys)/(1<<20), "MiB-sys")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.Logf("load average before/after: %s", strings.TrimSpace(string(load)))
	}
}

// cpuTime is the CPU time (user and system) the process used so far.
