package testenv

import (
	"testing"
	"time"
)

// BenchmarkStartStop measures a cold start (etcd, kube-apiserver, Flux CRDs
// established) and a stop: go test -run '^$' -bench StartStop -benchtime 3x.
func BenchmarkStartStop(b *testing.B) {
	var start, stop time.Duration
	for b.Loop() {
		t0 := time.Now()
		e, err := Start(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := e.Stop(); err != nil {
			b.Fatal(err)
		}
		start += t1.Sub(t0)
		stop += time.Since(t1)
	}
	b.ReportMetric(start.Seconds()/float64(b.N), "start-s/op")
	b.ReportMetric(stop.Seconds()/float64(b.N), "stop-s/op")
}
