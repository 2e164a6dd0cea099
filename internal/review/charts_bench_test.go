package review

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/spectest"
	"github.com/fleetwright/fleetwright/internal/synth"
)

type failCharts struct{ b *testing.B }

func (f failCharts) Render(context.Context, Release) (*Rendered, error) {
	f.b.Fatal("a chart was rendered")
	return nil, nil
}

// BenchmarkRenderChartsUntouched is the review of a change to one app's
// Deployments in a fleet of 10,000 apps, each with a postgresql addon (a
// HelmRelease) that the change leaves alone, with Charts: nothing is
// rendered, and finding that costs next to nothing (compare -run with
// Charts nil: BenchmarkReviewOneApp10k).
func BenchmarkRenderChartsUntouched(b *testing.B) {
	l := spectest.Loader(b)
	files := synth.Files(10_000)
	repo, ps := l.LoadFiles(files)
	if ps.HasErrors() {
		b.Fatal(ps)
	}
	f, err := generate.Render(repo, generate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	base := f.Map()
	head := maps.Clone(base)
	n := 0
	for p, data := range base {
		if strings.Contains(p, "/app00000/") && strings.Contains(string(data), "kind: Deployment\n") {
			head[p] = []byte(strings.ReplaceAll(string(data), "image: registry.bench.test/", "image: mirror.bench.test/"))
			n++
		}
	}
	if n == 0 {
		b.Fatal("nothing changes")
	}
	for _, tc := range []struct {
		name   string
		charts Charts
	}{{"without", nil}, {"with", failCharts{b}}} {
		b.Run(tc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				before := synth.CPUTime()
				c := BuildContext(context.Background(), Input{Base: base, Head: head, Charts: tc.charts})
				cpu += synth.CPUTime() - before
				if len(c.Changed) != 1 || strings.Contains(c.Body, "### Charts") {
					b.Fatal("something was rendered")
				}
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
