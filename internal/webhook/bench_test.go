package webhook

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// BenchmarkIngestSQLite posts signed Flux events to a server on loopback
// backed by SQLite on disk (WAL, full fsync per commit) from 32 concurrent
// clients, and reports events per second and the 99th percentile latency.
func BenchmarkIngestSQLite(b *testing.B) {
	e := newTestEnv(b, func(c *Config) {
		c.DefaultTimeout = time.Hour
		c.Backoff = probe.DefaultBackoff()
	})
	const (
		clients = 32
		apps    = 50
	)
	bodies := make([][]byte, b.N)
	for i := range bodies {
		app := fmt.Sprintf("app%02d", i%apps)
		bodies[i] = fixture(b, "kustomization-progressing", withApp("bench", app),
			withMessage(fmt.Sprintf("Deployment/bench/%s-web configured (%d)", app, i)))
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer hc.CloseIdleConnections()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	start := time.Now()
	lat, fails := postSigned(hc, e.ts.URL+"/hooks/flux", bodies, clients)
	elapsed := time.Since(start)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	if fails > 0 {
		b.Fatalf("%d of %d events were not stored", fails, b.N)
	}
	p99 := lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	// CPU time of the whole process (server and clients) per event: on a
	// machine shared with other work, wall-clock rates understate capacity.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_us/event")
}

// postSigned is postSignedTo with every body sent to url.
func postSigned(hc *http.Client, url string, bodies [][]byte, clients int) ([]time.Duration, int64) {
	return postSignedTo(hc, []string{url}, bodies, clients)
}

// postSignedTo posts every body, signed with the test key, from clients
// goroutines sharing hc, body i to urls[i mod len(urls)], and returns the
// answers' latencies, sorted, and how many events failed (no answer, or not
// 200).
func postSignedTo(hc *http.Client, urls []string, bodies [][]byte, clients int) ([]time.Duration, int64) {
	var (
		next  atomic.Int64
		fails atomic.Int64
		mu    sync.Mutex
		lat   = make([]time.Duration, 0, len(bodies))
		wg    sync.WaitGroup
	)
	for range clients {
		wg.Go(func() {
			mine := make([]time.Duration, 0, len(bodies)/clients+1)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					break
				}
				req, _ := http.NewRequest(http.MethodPost, urls[i%len(urls)], bytes.NewReader(bodies[i]))
				req.Header.Set(SignatureHeader, Sign([]byte(testKey), bodies[i]))
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					fails.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t0))
				if resp.StatusCode != http.StatusOK {
					fails.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	return lat, fails.Load()
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIngestArtifactEvents posts, from 32 concurrent clients,
// periodic reports of an app's component that reads its own OCIRepository
// (revision sha256:…), each mapped to its fleet revision by reading the
// Kustomization and OCIRepository from the test kube-apiserver and the
// app's deployments from SQLite: go test -run '^$' -bench ArtifactEvents.
func BenchmarkIngestArtifactEvents(b *testing.B) {
	project, fluxNS := env.Namespace(b), env.Namespace(b)
	f := newOCIFleet(b, fluxNS, project, map[string]string{"web": web1})
	f.rootApplied(b, revA)
	e := clusterEnv(b, fluxNS, nil, "127.0.0.1:1", func(c *Config) {
		c.RecheckInterval, c.DefaultTimeout, c.Backoff = -1, time.Hour, probe.DefaultBackoff()
	})
	recordPinned(b, e.st, project, revA, 0, map[string]string{"web": web1})
	const clients = 32
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = f.event(b, "web", web1, fmt.Sprintf("Reconciliation finished in %dms, next run in 10m0s", i))
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer hc.CloseIdleConnections()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	start := time.Now()
	lat, fails := postSigned(hc, e.ts.URL+"/hooks/flux", bodies, clients)
	elapsed := time.Since(start)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	if fails > 0 {
		b.Fatalf("%d of %d events were not stored", fails, b.N)
	}
	p99 := lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	// This process's CPU per event; the kube-apiserver's is not counted.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_us/event")
}

// BenchmarkIngestReplicas posts signed Flux events from 32 concurrent
// clients to one replica on SQLite and to 1, 2 and 3 replicas sharing one
// PostgreSQL database, each app's events spread over the replicas (event i
// goes to replica i mod n), and reports events per second and latency:
//
//	go test -run '^$' -bench IngestReplicas -benchtime 5000x ./internal/webhook/
func BenchmarkIngestReplicas(b *testing.B) {
	const (
		clients = 32
		apps    = 50
	)
	run := func(b *testing.B, urls []string) {
		bodies := make([][]byte, b.N)
		for i := range bodies {
			app := fmt.Sprintf("app%02d", i%apps)
			bodies[i] = fixture(b, "kustomization-progressing", withApp("bench", app),
				withMessage(fmt.Sprintf("Deployment/bench/%s-web configured (%d)", app, i)))
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
		defer hc.CloseIdleConnections()
		b.ResetTimer()
		cpu0 := cpuTime(b)
		start := time.Now()
		lat, fails := postSignedTo(hc, urls, bodies, clients)
		elapsed := time.Since(start)
		cpu := cpuTime(b) - cpu0
		b.StopTimer()
		if fails > 0 {
			b.Fatalf("%d of %d events were not stored", fails, b.N)
		}
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99_ms")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_us/event")
	}
	mod := func(c *Config) {
		c.DefaultTimeout = time.Hour
		c.Backoff = probe.DefaultBackoff()
	}
	b.Run("sqlite-1", func(b *testing.B) {
		e := newTestEnv(b, mod)
		run(b, []string{e.ts.URL + "/hooks/flux"})
	})
	for n := 1; n <= 3; n++ {
		b.Run(fmt.Sprintf("postgres-%d", n), func(b *testing.B) {
			rs := newReplicas(b, n, func(_ int, c *Config) { mod(c) })
			var urls []string
			for _, r := range rs {
				urls = append(urls, r.ts.URL+"/hooks/flux")
			}
			run(b, urls)
		})
	}
}

// BenchmarkPreviewSection builds the preview section of a pull request's
// preview of 10 apps in a store of 2,000 apps (what the webhook does on
// each state the outbox sends of a preview's app), and reports the time
// per section.
func BenchmarkPreviewSection(b *testing.B) {
	e := newTestEnv(b, nil)
	const apps, preview = 2000, 10
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var evs []store.Event
	for i := range apps {
		env := "production"
		if i < preview {
			env = "pr-7"
		}
		name := fmt.Sprintf("app%04d", i)
		evs = append(evs, store.Event{ReceivedAt: now, EventTime: now, Kind: "Kustomization", Namespace: "shop", Name: "shop-" + name + "-web",
			Severity: "info", Reason: "ReconciliationSucceeded", Revision: rev1, App: layout.AppRef{Project: "shop", Name: name}, Component: "web",
			SpecRevision: fixtureSpec, Environment: env, Health: store.HealthHealthy, DedupeKey: name + env})
	}
	if _, err := e.st.RecordEvents(b.Context(), evs, now); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		s, err := previewContent(b.Context(), e.st, "pr-7")
		if err != nil || strings.Count(s, "\n- shop/") != preview {
			b.Fatalf("section %q, %v", s, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/section")
}
