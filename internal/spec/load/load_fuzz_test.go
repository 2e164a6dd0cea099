package load_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// fuzzLoader is one loader for every input: compiling the schemas is the
// slow part, and a loader serves many loads.
var fuzzLoader = func() func(testing.TB) *load.Loader {
	var l *load.Loader
	return func(t testing.TB) *load.Loader {
		if l == nil {
			l = newLoader(t, "")
		}
		return l
	}
}()

// FuzzLoad: whatever two apps and a platform file hold, loading never
// panics, every problem names a file of the repository and a position in
// it, and a repository with no error has an order over every component.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{"../validate/testdata/invalid", "testdata/valid"} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".json")) {
				if data, err := os.ReadFile(p); err == nil {
					if filepath.Base(p) == "platform.yaml" {
						f.Add([]byte{}, []byte{}, data)
					} else {
						f.Add(data, []byte("name: b\ncomponents: [{name: web, type: workload, workload_spec: {image: x:1, port: 80, ingress: {enabled: true}}}]\n"), []byte{})
					}
				}
			}
			return nil
		})
	}
	f.Add([]byte("name: x\ncomponents: [{name: y-z, type: workload, workload_spec: {image: n:1}}]\n"),
		[]byte("name: x-y\ncomponents: [{name: z, type: workload, workload_spec: {image: n:1}}]\n"),
		[]byte("clusters: [{name: a, path: clusters/one}, {name: b, path: clusters/one/two}]\n"))
	f.Add([]byte("name: a\ncomponents: [{name: web, type: workload, workload_spec: {image: n:1, port: 80, replicas: 1}}]\nenvironments: {production: {components: {web: {workload_spec: {replicas: 4, port: null, ingress: {enabled: true}}}}}, staging: {enabled: false}}\n"),
		[]byte("name: b\ncomponents: [{name: web, type: workload, workload_spec: {image: x:1}}]\nenvironments: {prod: {}, preview: {enabled: false}}\n"),
		[]byte("environments: [{name: staging, cluster: s}, {name: production, cluster: p, promote_from: staging}]\n"))
	f.Fuzz(func(t *testing.T, a, b, platform []byte) {
		files := map[string][]byte{
			"apps/shop/a/app.yaml": a,
			"apps/shop/b/app.yaml": b,
		}
		if len(platform) > 0 {
			files["platform.yaml"] = platform
		}
		repo, ps := fuzzLoader(t).LoadFiles(files)
		for _, p := range ps {
			if _, ok := files[p.File]; !ok {
				t.Fatalf("a problem names %q, not a file of the repository: %v", p.File, p)
			}
			if p.Line < 1 || p.Column < 1 {
				t.Fatalf("a problem has no position: %v", p)
			}
		}
		if repo == nil || ps.HasErrors() {
			return
		}
		n := 0
		for _, app := range repo.Apps {
			n += len(app.Spec.Components)
		}
		if len(repo.Order) != n {
			t.Fatalf("a valid repository orders %d of its %d components", len(repo.Order), n)
		}
	})
}
