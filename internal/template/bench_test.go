package template_test

import (
	"fmt"
	"testing"

	"github.com/fleetwright/fleetwright/internal/spectest"
)

// BenchmarkLoad1k loads 1,000 apps written out and 1,000 apps of one
// template with the same components, to show what expansion costs.
func BenchmarkLoad1k(b *testing.B) {
	const n = 1000
	plain := map[string][]byte{"platform.yaml": []byte(platform)}
	templated := map[string][]byte{"platform.yaml": []byte(platform), "templates/web-db/template.yaml": []byte(stackTemplate)}
	for i := range n {
		name := fmt.Sprintf("app%04d", i)
		host := name + ".example.com"
		plain["apps/shop/"+name+"/app.yaml"] = []byte(handWritten(name, "myorg/"+name+":1.0", 2, host, "app"))
		templated["apps/shop/"+name+"/app.yaml"] = []byte(fmt.Sprintf("name: %s\ntemplate:\n  name: web-db\n  parameters: {image: myorg/%s:1.0, host: %s}\n", name, name, host))
	}
	for _, bc := range []struct {
		name  string
		files map[string][]byte
	}{{"written-out", plain}, {"templated", templated}} {
		b.Run(bc.name, func(b *testing.B) {
			l := spectest.Loader(b)
			for b.Loop() {
				repo, ps := l.LoadFiles(bc.files)
				if ps.HasErrors() || len(repo.Apps) != n {
					b.Fatalf("%d apps, problems:\n%v", len(repo.Apps), ps)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/app")
		})
	}
}
