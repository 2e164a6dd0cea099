package review_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/exports"
	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// BenchmarkReview10k builds the review of a change that moves every
// workload of 10,000 apps to another registry: every Deployment file
// changes, so every object of every app is read on both sides.
func BenchmarkReview10k(b *testing.B) {
	l, err := spec.NewLoader(exports.Catalog{}, "")
	if err != nil {
		b.Fatal(err)
	}
	repo, ps := l.LoadFiles(synth.Files(10_000))
	if ps.HasErrors() {
		b.Fatal(ps)
	}
	f, err := generate.Render(repo, generate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	base := f.Map()
	head := make(map[string][]byte, len(base))
	changed := 0
	for p, data := range base {
		s := string(data)
		if strings.Contains(s, "kind: Deployment\n") {
			s = strings.ReplaceAll(s, "image: registry.bench.test/", "image: mirror.bench.test/")
			changed++
		}
		head[p] = []byte(s)
	}
	if changed < 10_000 {
		b.Fatalf("only %d Deployment files changed", changed)
	}
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		before := synth.CPUTime()
		c := review.Build(review.Input{Base: base, Head: head, BaseRepo: repo, HeadRepo: repo})
		cpu += synth.CPUTime() - before
		if len(c.Changed) != 10_000 {
			b.Fatalf("%d apps changed, want 10000", len(c.Changed))
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
