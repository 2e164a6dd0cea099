package review_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// BenchmarkReview10k builds the review of a change that moves every
// workload of 10,000 apps to another registry: every Deployment file
// changes, so every object of every app is read on both sides.
func BenchmarkReview10k(b *testing.B) {
	repo := spectest.LoadFiles(b, synth.Files(10_000))
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
		c := review.Build(review.Input{Base: base, Head: head, BaseRepo: repo, HeadRepo: repo, Charts: unasked{b}})
		cpu += synth.CPUTime() - before
		if len(c.Changed) != 10_000 {
			b.Fatalf("%d apps changed, want 10000", len(c.Changed))
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkReviewOneApp10k builds the review of a change to one app of a
// fleet of 10,000, in both layouts: what a pull request usually is. The
// Flux files of every app are read (the count of components Flux
// reconciles needs them), the objects of the changed app only.
func BenchmarkReviewOneApp10k(b *testing.B) {
	for _, layout := range []struct{ name, platform string }{
		{"git", ""},
		{"artifacts", "fleet: {artifacts: {repository: registry.bench.test/fleet}}\n"},
	} {
		b.Run(layout.name, func(b *testing.B) {
			files := synth.Files(10_000)
			files["platform.yaml"] = append(files["platform.yaml"], layout.platform...)
			const app = "apps/team000/app00000/app.yaml"
			head := maps.Clone(files)
			head[app] = []byte(strings.Replace(string(files[app]), "/api:v", "/api:v9", 1))
			baseRepo, base := benchRender(b, files)
			headRepo, headFleet := benchRender(b, head)
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				before := synth.CPUTime()
				c := review.Build(review.Input{Base: base, Head: headFleet, BaseRepo: baseRepo, HeadRepo: headRepo, Charts: unasked{b}})
				cpu += synth.CPUTime() - before
				if len(c.Changed) != 1 || !strings.Contains(c.Body, "Flux reconciles **") {
					b.Fatalf("%d apps changed:\n%s", len(c.Changed), c.Body[:min(len(c.Body), 2000)])
				}
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// unasked is review.Charts for a change that touches no HelmRelease (the
// fleet's postgresql addons do not change): the review must not ask it,
// and asking it for nothing must cost nothing.
type unasked struct{ b *testing.B }

func (u unasked) Render(context.Context, review.Release) (*review.Rendered, error) {
	u.b.Fatal("a chart was rendered for a change that touches no HelmRelease")
	return nil, nil
}

func benchRender(b *testing.B, files map[string][]byte) (*load.Repo, map[string][]byte) {
	b.Helper()
	repo := spectest.LoadFiles(b, files)
	f, err := generate.Render(repo, generate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return repo, f.Map()
}

// BenchmarkReview10kArtifacts is BenchmarkReview10k with fleet.artifacts:
// every api and worker folder changes, so the review rebuilds 20,000
// artifacts to check their pinned digests.
func BenchmarkReview10kArtifacts(b *testing.B) {
	files := synth.Files(10_000)
	files["platform.yaml"] = append(files["platform.yaml"], "fleet: {artifacts: {repository: registry.bench.test/fleet}}\n"...)
	head := maps.Clone(files)
	for p, data := range files {
		head[p] = []byte(strings.ReplaceAll(string(data), "image: registry.bench.test/", "image: mirror.bench.test/"))
	}
	baseRepo, base := benchRender(b, files)
	headRepo, headFleet := benchRender(b, head)
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		before := synth.CPUTime()
		c := review.Build(review.Input{Base: base, Head: headFleet, BaseRepo: baseRepo, HeadRepo: headRepo})
		cpu += synth.CPUTime() - before
		if len(c.Changed) != 10_000 || len(c.Danger) != 0 {
			b.Fatalf("%d apps changed, %d dangers", len(c.Changed), len(c.Danger))
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkReviewNewApp10k builds the review of a new app in a fleet of
// 10,000: its kinds are looked for in the base fleet's text, its host in
// the routes of every other app, its chart repository in the base's
// sources (what the dangers beyond a project cost when they must read
// the files the change leaves alone).
func BenchmarkReviewNewApp10k(b *testing.B) {
	files := synth.Files(10_000)
	head := maps.Clone(files)
	const app = "apps/team000/app00000/app.yaml"
	head["apps/team999/appnew/app.yaml"] = []byte(strings.ReplaceAll(string(files[app]), "app00000", "appnew"))
	baseRepo, base := benchRender(b, files)
	headRepo, headFleet := benchRender(b, head)
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		before := synth.CPUTime()
		c := review.Build(review.Input{Base: base, Head: headFleet, BaseRepo: baseRepo, HeadRepo: headRepo})
		cpu += synth.CPUTime() - before
		if len(c.Changed) != 1 {
			b.Fatalf("%d apps changed", len(c.Changed))
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
