package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchDockerfile has a slow RUN that makes 500 files (the sleep of 1 s
// stands for fetching dependencies, as npm ci or go mod download do), a
// COPY of the application and a RUN that reads it: a small application's
// shape.
const benchDockerfile = `FROM BASE
WORKDIR /app
RUN sleep 1 && mkdir -p lib && for i in $(seq 1 500); do echo "module $i" > lib/m$i.txt; done
COPY app.txt .
RUN wc -c app.txt lib/m1.txt > sizes.txt
ENTRYPOINT ["/bin/cat", "/app/sizes.txt"]
`

// BenchmarkRunColdBuild builds the Dockerfile from nothing: every RUN runs
// (in a new repository each time, so the layer cache is empty) and every
// layer is pushed.
func BenchmarkRunColdBuild(b *testing.B) {
	re := newRunEnv(b, LocalOptions{})
	root := re.context(b, benchDockerfile, map[string]tfile{"app.txt": {body: "v1\n"}})
	i := 0
	for b.Loop() {
		i++
		if _, err := re.local.Build(context.Background(), Request{Root: root, Repo: fmt.Sprintf("%s/bench/cold%d", re.host, i), Tag: "t", Platforms: []string{platformString(hostPlatform())}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunWarmRebuild changes the copied file each time, as a commit
// does, on a fresh runner: the first RUN is a hit of the registry's layer
// cache, the second runs.
func BenchmarkRunWarmRebuild(b *testing.B) {
	re := newRunEnv(b, LocalOptions{})
	root := re.context(b, benchDockerfile, map[string]tfile{"app.txt": {body: "v0\n"}})
	req := Request{Root: root, Repo: re.host + "/bench/warm", Platforms: []string{platformString(hostPlatform())}}
	builder, err := New(Config{Registry: re.reg, Local: LocalOptions{WorkDir: runWorkDir(b), CacheDir: b.TempDir(), Init: sandboxInitProgram(b)}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := builder.Build(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		b.StopTimer()
		if err := os.WriteFile(filepath.Join(root, "app.txt"), []byte(fmt.Sprintf("v%d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := builder.Build(context.Background(), req)
		if err != nil || res.Reused {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkRunNoop builds the unchanged Dockerfile: hashing the context
// and one HEAD request.
func BenchmarkRunNoop(b *testing.B) {
	re := newRunEnv(b, LocalOptions{})
	root := re.context(b, benchDockerfile, map[string]tfile{"app.txt": {body: "v1\n"}})
	req := Request{Root: root, Repo: re.host + "/bench/noop", Platforms: []string{platformString(hostPlatform())}}
	builder, err := New(Config{Registry: re.reg, Local: LocalOptions{WorkDir: runWorkDir(b), CacheDir: b.TempDir(), Init: sandboxInitProgram(b)}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := builder.Build(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := builder.Build(context.Background(), req)
		if err != nil || !res.Reused {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkUnchanged100Components runs 100 built components with RUN, all
// up to date, as render does: one HEAD each, nothing built or pushed.
func BenchmarkUnchanged100Components(b *testing.B) {
	re := newRunEnv(b, LocalOptions{})
	builder, err := New(Config{Registry: re.reg, Local: LocalOptions{WorkDir: runWorkDir(b), CacheDir: b.TempDir(), Init: sandboxInitProgram(b)}})
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	var jobs []Job
	for i := range 100 {
		files := map[string]tfile{
			fmt.Sprintf("c%03d/Dockerfile", i): {body: "FROM " + re.base + "\nRUN echo " + fmt.Sprint(i) + " > /id\nCOPY . /src\n"},
		}
		for j := range 20 {
			files[fmt.Sprintf("c%03d/src/f%02d.go", i, j)] = tfile{body: fmt.Sprintf("package main // %d %d\n", i, j)}
		}
		writeTree(b, root, files)
		jobs = append(jobs, Job{Name: fmt.Sprintf("c%03d", i), Request: Request{
			Root: root, Context: fmt.Sprintf("c%03d", i), Repo: fmt.Sprintf("%s/bench/c%03d", re.host, i), Platforms: []string{platformString(hostPlatform())},
		}})
	}
	levels := [][]Job{jobs}
	if _, err := RunLevels(context.Background(), builder, levels, RunOptions{Concurrency: 4}); err != nil {
		b.Fatal(err)
	}
	re.srv.Reset()
	for b.Loop() {
		res, err := RunLevels(context.Background(), builder, levels, RunOptions{Concurrency: 4})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if !r.Reused {
				b.Fatal("rebuilt", r)
			}
		}
	}
	if w := re.srv.Writes(); len(w) > 0 {
		b.Fatalf("%d registry writes", len(w))
	}
	heads := 0
	for _, r := range re.srv.Requests() {
		if r.Method == "HEAD" {
			heads++
		}
	}
	b.ReportMetric(float64(heads)/float64(b.N), "HEADs/op")
	b.ReportMetric(float64(len(re.srv.Requests())-heads)/float64(b.N), "pings/op")
}
