package render_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// BenchmarkPreview renders a pull request's preview of 20 apps (3
// components each) out of a repository of 1,000, as render preview does
// once the specs are loaded: the apps and those they reference, their
// copies checked, generated into the preview's folder, and the files
// checked to stay in the preview.
func BenchmarkPreview(b *testing.B) {
	files := synth.Files(1_000)
	files["platform.yaml"] = append(files["platform.yaml"], "previews: {cluster: bench, apps_domain: preview.bench.test}\n"...)
	l, err := render.NewLoader("")
	if err != nil {
		b.Fatal(err)
	}
	repo, ps := l.LoadFiles(files)
	if ps.HasErrors() {
		b.Fatal(ps)
	}
	var changed []string
	for i := range 20 {
		changed = append(changed, fmt.Sprintf("team%03d/app%05d", i/50, i))
	}
	now := time.Unix(1800000000, 0)
	b.ResetTimer()
	for b.Loop() {
		p, ps := l.PreviewOf(repo, 7, changed)
		if ps.HasErrors() || len(p.Apps) != 20 {
			b.Fatalf("%v %v", p.Apps, ps)
		}
		if _, _, err := render.RenderPreview(render.PreviewInput{Preview: p, Head: "abc", Now: now}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*20), "ms/app")
}
