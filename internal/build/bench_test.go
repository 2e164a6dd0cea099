package build

import (
	"context"
	"fmt"
	"testing"
)

// smallFilesContext writes a context of n small files in 20 directories
// with a Dockerfile that copies it onto scratch.
func smallFilesContext(b *testing.B, n int) string {
	root := b.TempDir()
	files := map[string]tfile{"Dockerfile": {body: "FROM scratch\nCOPY . /app\nENTRYPOINT [\"/app/bin\"]\n"}}
	for i := range n {
		files[fmt.Sprintf("src/d%02d/f%04d.txt", i%20, i)] = tfile{body: fmt.Sprintf("file %d\n%0200d\n", i, i)}
	}
	writeTree(b, root, files)
	return root
}

func BenchmarkContentTag1000Files(b *testing.B) {
	root := smallFilesContext(b, 1000)
	req := Request{Root: root}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ContentTag(req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkLocalBuild1000Files builds and pushes two platforms of a
// 1,000-file context, each time into a new repository so the layer is
// uploaded every time.
func BenchmarkLocalBuild1000Files(b *testing.B) {
	e := newTestEnv(b)
	root := smallFilesContext(b, 1000)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		_, err := e.local.Build(context.Background(), Request{Root: root, Repo: fmt.Sprintf("%s/bench/r%d", e.host, i), Tag: "t"})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkUpToDate1000Files measures a build whose tag is already
// present: hashing the context and one HEAD request.
func BenchmarkUpToDate1000Files(b *testing.B) {
	e := newTestEnv(b)
	root := smallFilesContext(b, 1000)
	builder, err := New(Config{Registry: e.reg})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Root: root, Repo: e.host + "/bench/app"}
	if _, err := builder.Build(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := builder.Build(context.Background(), req)
		if err != nil || !res.Reused {
			b.Fatal(res, err)
		}
	}
}
