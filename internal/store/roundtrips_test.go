package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// TestBatchRoundTrips: on PostgreSQL a batch of events of apps whose
// deployments exist makes as many round trips to the server whatever its
// number of events, and few of them: each round trip costs both processes
// a wake-up, and the replicas of one machine share its cores.
func TestBatchRoundTrips(t *testing.T) {
	t.Parallel()
	proxy := newSyncCounter(t, testPostgresSchema(t))
	// One connection, so that every statement is prepared on it once,
	// before the batches counted.
	s, err := OpenPostgres(t.Context(), proxy.dsn, PostgresOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	const apps = 10
	rev := "main@sha1:1111"
	batch := func(name string, events int) []Event {
		var evs []Event
		for i := range events {
			evs = append(evs, ev(fmt.Sprintf("%s-%d", name, i), "shop", fmt.Sprintf("app%d", i%apps), "web", rev, "Progressing",
				HealthProgressing, t0.Add(time.Duration(i)*time.Second)))
		}
		return evs
	}
	trips := func(evs []Event) int64 {
		before := proxy.syncs.Load()
		got, err := s.RecordEvents(t.Context(), evs, t0)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			if r.Duplicate || r.EventID == 0 || r.DeploymentID == 0 || r.NewDeployment {
				t.Fatalf("event %d recorded as %+v", i, r)
			}
		}
		return proxy.syncs.Load() - before
	}
	if _, err := s.RecordEvents(t.Context(), batch("create", apps), t0); err != nil {
		t.Fatal(err)
	}
	trips(batch("warm", apps))
	small, large := trips(batch("small", apps)), trips(batch("large", 6*apps))
	t.Logf("round trips: %d for %d events, %d for %d", small, apps, large, 6*apps)
	// Begin, the apps' locks, reading the deployments, inserting the
	// events, writing the component states, commit.
	if small != large || large > 6 {
		t.Errorf("round trips: %d for %d events, %d for %d; want the same, at most 6", small, apps, large, 6*apps)
	}
	ds, err := s.Deployments(t.Context(), layout.AppRef{Project: "shop", Name: "app0"}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || len(ds[0].Components) != 1 || ds[0].Components[0].Message != "Progressing large-50" {
		t.Errorf("app0's deployments = %+v", ds)
	}
}

// syncCounter is a TCP proxy in front of a PostgreSQL server that counts
// the client's round trips: the Sync messages that end an extended query,
// and the simple queries.
type syncCounter struct {
	dsn   string
	syncs atomic.Int64
}

func newSyncCounter(t *testing.T, dsn string) *syncCounter {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	server := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	u.Host = ln.Addr().String()
	p := &syncCounter{dsn: u.String()}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", server)
			if err != nil {
				_ = c.Close()
				continue
			}
			wg.Go(func() {
				_, _ = io.Copy(c, up)
				_ = c.Close()
			})
			wg.Go(func() {
				if err := p.count(c, up); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					t.Logf("proxy: %v", err)
				}
				_ = up.Close()
			})
		}
	})
	return p
}

// count copies the client's messages to the server: the startup message
// (a length, then its body), then messages of a type byte and a length.
func (p *syncCounter) count(c net.Conn, up net.Conn) error {
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return err
	}
	if _, err := up.Write(n[:]); err != nil {
		return err
	}
	if _, err := io.CopyN(up, c, int64(binary.BigEndian.Uint32(n[:]))-4); err != nil {
		return err
	}
	var head [5]byte
	for {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return err
		}
		if head[0] == 'S' || head[0] == 'Q' {
			p.syncs.Add(1)
		}
		if _, err := up.Write(head[:]); err != nil {
			return err
		}
		if _, err := io.CopyN(up, c, int64(binary.BigEndian.Uint32(head[1:]))-4); err != nil {
			return err
		}
	}
}
