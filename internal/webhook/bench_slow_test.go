package webhook

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSignedEventsUnderSlowClients holds 5,000 connections on loopback
// that each announce a 100,000-byte body and send a byte every 5s (one that
// loses its connection dials again a second later), with the default
// limits, while 4 clients post b.N signed events; it reports their p99
// latency and how many slow connections were open. Needs about 10,100 file
// descriptors: it raises RLIMIT_NOFILE to the hard limit, and holds fewer
// slow clients (reported) when that is not enough.
//
//	go test -run '^$' -bench SignedEventsUnderSlowClients -benchtime 2000x ./internal/webhook/
func BenchmarkSignedEventsUnderSlowClients(b *testing.B) {
	slow := 5000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		if room := int(lim.Cur) - 200; 2*slow > room {
			slow = room / 2
		}
	}
	var ln *ConnLimiter
	e := newTestEnvOn(b, nil, func(l net.Listener) net.Listener {
		ln = LimitListener(l, DefaultMaxConnections)
		return ln
	})
	addr := addrOf(e)

	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg   sync.WaitGroup
		open atomic.Int64
	)
	defer func() {
		cancel()
		wg.Wait()
	}()
	head := fmt.Appendf(nil, "POST /hooks/flux HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n%s: sha256=00\r\n\r\n{", SignatureHeader)
	dialSem := make(chan struct{}, 64)
	for range slow {
		wg.Go(func() {
			for ctx.Err() == nil {
				dialSem <- struct{}{}
				c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				<-dialSem
				if err != nil {
					sleepCtx(ctx, time.Second)
					continue
				}
				open.Add(1)
				_, err = c.Write(head)
				for err == nil && sleepCtx(ctx, 5*time.Second) {
					_, err = c.Write([]byte(" "))
				}
				_ = c.Close()
				open.Add(-1)
				sleepCtx(ctx, time.Second)
			}
		})
	}
	for deadline := time.Now().Add(2 * time.Minute); ln.Open() < slow; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d slow clients connected", ln.Open(), slow)
		}
	}

	const clients = 4
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = fixture(b, "kustomization-progressing", withMessage(fmt.Sprintf("Deployment/shop/api-web configured (%d)", i)))
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	var (
		mu       sync.Mutex
		minOpen  = int64(slow)
		sampling = make(chan struct{})
	)
	go func() {
		for {
			select {
			case <-sampling:
				return
			case <-time.After(50 * time.Millisecond):
				mu.Lock()
				minOpen = min(minOpen, open.Load())
				mu.Unlock()
			}
		}
	}()
	b.ResetTimer()
	start := time.Now()
	lat, fails := postSigned(hc, e.ts.URL+"/hooks/flux", bodies, clients)
	elapsed := time.Since(start)
	b.StopTimer()
	close(sampling)
	if fails > 0 {
		b.Errorf("%d of %d signed events failed", fails, b.N)
	}
	if len(lat) == 0 {
		b.Fatal("no signed event answered")
	}
	mu.Lock()
	held := minOpen
	mu.Unlock()
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(held), "slow_clients_min")
	b.ReportMetric(float64(slow), "slow_clients")
}

// sleepCtx sleeps for d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// BenchmarkHalfSentBodies opens 1,000 connections that each send half of a
// 1 MiB body and stall, and reports the heap the server holds for them and
// how many were refused at once (503) by the body budget.
//
//	go test -run '^$' -bench HalfSentBodies -benchtime 1x ./internal/webhook/
func BenchmarkHalfSentBodies(b *testing.B) {
	const conns = 1000
	for b.Loop() {
		e := newTestEnv(b, nil)
		addr := addrOf(e)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		half := bytes.Repeat([]byte("x"), MaxEventBytes/2)
		var (
			wg      sync.WaitGroup
			refused atomic.Int64
			cs      = make([]net.Conn, conns)
		)
		sem := make(chan struct{}, 32)
		for i := range conns {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				cs[i] = c
				fmt.Fprintf(c, "POST /hooks/flux HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", MaxEventBytes)
				if _, err := c.Write(half); err != nil {
					refused.Add(1)
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		used := e.srv.budget.used.Load()
		for _, c := range cs {
			if c == nil {
				continue
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if n, _ := c.Read(make([]byte, 16)); n > 0 {
				refused.Add(1)
			}
			_ = c.Close()
		}
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap_MiB")
		b.ReportMetric(float64(used)/(1<<20), "budget_MiB")
		b.ReportMetric(float64(refused.Load()), "refused")
	}
}
