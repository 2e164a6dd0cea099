package store

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkIngestManyDeployments records events that each start a new
// deployment of one app, 100 to a transaction (as group commit batches
// them), on SQLite on disk, from 0 to 100,000 deployments, and reports the
// rate around a few sizes: it must stay flat as the app's history grows.
// Run it once: go test -run '^$' -bench IngestManyDeployments -benchtime 1x ./internal/store/
func BenchmarkIngestManyDeployments(b *testing.B) {
	const (
		total  = 100_000
		batch  = 100
		window = 2_000
	)
	marks := []int{0, 10_000, 50_000, total - window}
	for b.Loop() {
		s, err := OpenSQLite(b.Context(), b.TempDir()+"/history.db", SQLiteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if os.Getenv("FLEETWRIGHT_BENCH_WITHOUT_ACTIVE_INDEX") != "" {
			// The schema before the index: what the supersede cost then.
			if _, err := s.db.ExecContext(b.Context(), `DROP INDEX deployments_active`); err != nil {
				b.Fatal(err)
			}
		}
		rates := map[int]float64{}
		var start time.Time
		evs := make([]Event, batch)
		for n := 0; n < total; n += batch {
			for _, m := range marks {
				if n == m {
					start = time.Now()
				}
				if n == m+window {
					rates[m] = window / time.Since(start).Seconds()
				}
			}
			at := t0.Add(time.Duration(n) * time.Second)
			for i := range evs {
				evs[i] = ev(fmt.Sprint("k", n+i), "shop", "api", "web", fmt.Sprint("main@sha1:", n+i), "Progressing", HealthProgressing, at)
			}
			if _, err := s.RecordEvents(b.Context(), evs, at); err != nil {
				b.Fatal(err)
			}
		}
		rates[total-window] = window / time.Since(start).Seconds()
		for _, m := range marks {
			b.ReportMetric(rates[m], fmt.Sprintf("events/s@%dk", (m+window/2)/1000))
		}
		_ = s.Close()
	}
}
