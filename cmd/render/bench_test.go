package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/synth"
)

// The command's own figures, through run as a user calls it: the
// generate benchmarks measure the generator; these add loading, images,
// the fleet index and the comparison with the folder (render), and
// reading two revisions from Git (review).

func BenchmarkRenderCommand10k(b *testing.B) { benchRenderCommand(b, 10_000, false) }

func BenchmarkRerenderNoopCommand10k(b *testing.B) { benchRenderCommand(b, 10_000, true) }

func BenchmarkReview10k(b *testing.B) {
	const n = 10_000
	dir := b.TempDir()
	gittest.Git(b, dir, "init", "-q", "-b", "main")
	if err := synth.Write(dir, n); err != nil {
		b.Fatal(err)
	}
	base := benchCommit(b, dir, "apps")
	// Every hundredth app changes its timeout.
	for p, data := range synth.Files(n) {
		if strings.HasSuffix(p, "00/app.yaml") {
			data = bytes.Replace(data, []byte("timeout: 10m"), []byte("timeout: 11m"), 1)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	head := benchCommit(b, dir, "timeouts")
	var cpu time.Duration
	for b.Loop() {
		before := synth.CPUTime()
		r := benchRun(b, nil, "review", "--base", base, "--head", head, "--post=false", dir)
		cpu += synth.CPUTime() - before
		if !strings.Contains(r, "**0 app(s) added, 100 changed, 0 removed.**") {
			b.Fatalf("unexpected comment:\n%.2000s", r)
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/app")
}

func benchRenderCommand(b *testing.B, n int, noop bool) {
	src := b.TempDir()
	if err := synth.Write(src, n); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"FLEETWRIGHT_CACHE": b.TempDir()}
	out := filepath.Join(b.TempDir(), "fleet")
	if noop {
		benchRun(b, env, "--out", out, src)
	}
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		if !noop {
			b.StopTimer()
			out = filepath.Join(b.TempDir(), "fleet")
			b.StartTimer()
		}
		before := synth.CPUTime()
		benchRun(b, env, "--out", out, src)
		cpu += synth.CPUTime() - before
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/app")
}

func benchRun(b *testing.B, env map[string]string, args ...string) string {
	b.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(k string) string { return env[k] }})
	if err != nil {
		b.Fatalf("%v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

func benchCommit(b *testing.B, dir, msg string) string {
	b.Helper()
	gittest.GitEnv(b, dir, gitEnv, "add", "-A")
	gittest.GitEnv(b, dir, gitEnv, "commit", "-q", "-m", msg)
	return strings.TrimSpace(gittest.Git(b, dir, "rev-parse", "HEAD"))
}
