package webhook

import (
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the limits on what clients may hold (docs/webhook.md).
const (
	DefaultReadHeaderTimeout   = 10 * time.Second
	DefaultReadTimeout         = 30 * time.Second
	DefaultWriteTimeout        = 30 * time.Second
	DefaultIdleTimeout         = 60 * time.Second
	DefaultMaxConnections      = 10000
	DefaultMaxPendingBodyBytes = 64 << 20
)

// bodyChunk is the unit in which body memory is reserved and read: every
// body in flight holds at least one.
const bodyChunk = 4 << 10

// pooledBodyMax is the largest buffer kept for reuse; bigger ones (rare:
// Flux's events are a few KiB) go back to the garbage collector.
const pooledBodyMax = 64 << 10

// retryAfterSeconds is the Retry-After of a 503 for a full body budget.
const retryAfterSeconds = "1"

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, bodyChunk); return &b }}

// bodyBudget bounds the bytes of request bodies buffered before they are
// authenticated. take never waits: a full budget is answered at once.
type bodyBudget struct {
	max  int64
	used atomic.Int64
}

func (b *bodyBudget) take(n int64) bool {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *bodyBudget) give(n int64) { b.used.Add(-n) }

var errBudget = errors.New("too many event bodies in flight")

// body is a request body read into a pooled buffer, with the budget it holds.
type body struct {
	buf      *[]byte
	budget   *bodyBudget
	reserved int64
}

// readBody reads r into a pooled buffer, reserving budget a chunk ahead of
// what it reads; past limit bytes it returns an *http.MaxBytesError, and
// errBudget when the budget is spent. Call release when done with the bytes.
func readBody(r io.Reader, limit int64, budget *bodyBudget) (*body, error) {
	b := &body{buf: bodyPool.Get().(*[]byte), budget: budget}
	buf := (*b.buf)[:0]
	for {
		if int64(len(buf))+bodyChunk > b.reserved {
			if !budget.take(bodyChunk) {
				*b.buf = buf
				b.release()
				return nil, errBudget
			}
			b.reserved += bodyChunk
		}
		buf = slices.Grow(buf, bodyChunk)
		n, err := r.Read(buf[len(buf) : len(buf)+bodyChunk])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			*b.buf = buf
			b.release()
			return nil, &http.MaxBytesError{Limit: limit}
		}
		if errors.Is(err, io.EOF) {
			*b.buf = buf
			return b, nil
		}
		if err != nil {
			*b.buf = buf
			b.release()
			return nil, err
		}
	}
}

// bytes returns the body; valid until release.
func (b *body) bytes() []byte { return *b.buf }

// authenticated returns the budget: the body is no longer a stranger's.
func (b *body) authenticated() {
	b.budget.give(b.reserved)
	b.reserved = 0
}

// release returns the budget and the buffer.
func (b *body) release() {
	if b.buf == nil {
		return
	}
	b.authenticated()
	if cap(*b.buf) <= pooledBodyMax {
		*b.buf = (*b.buf)[:0]
		bodyPool.Put(b.buf)
	}
	b.buf = nil
}

// HTTPServer returns the http.Server of the handler with the configured
// timeouts, ending the event streams when its Shutdown begins.
func (s *Server) HTTPServer() *http.Server {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
	}
	hs.RegisterOnShutdown(s.BeginShutdown)
	return hs
}

// LimitListener returns a listener that holds at most n accepted connections
// open at once: Accept waits while n are open. With n <= 0 it only passes
// ln's connections on.
func LimitListener(ln net.Listener, n int) *ConnLimiter {
	return &ConnLimiter{Listener: ln, sem: make(chan struct{}, max(n, 0)), done: make(chan struct{})}
}

// ConnLimiter is a listener bounding its open connections.
type ConnLimiter struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Open returns the number of connections open.
func (l *ConnLimiter) Open() int { return len(l.sem) }

// Accept waits for a free slot, then for a connection.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	if cap(l.sem) == 0 {
		return l.Listener.Accept()
	}
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.sem }}, nil
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *ConnLimiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// Defaults of the stream limits (docs/webhook.md).
const (
	DefaultMaxStreams          = 1000
	DefaultMaxStreamsPerPerson = 10
	DefaultMaxStreamsPerToken  = 20
	DefaultMaxStreamsPerAddr   = 50
)

// StreamLimits bounds the live-update streams (/ui/stream and
// /api/v1/stream) open at once. A stream holds a connection for as long as
// it is open: Total, kept below the listener's connections
// (-max-connections), leaves the rest to /readyz, Flux's events and the
// pages; the other limits keep one person, token or address from taking
// the whole of Total. Zero takes the default, negative lifts a limit.
type StreamLimits struct {
	// Total bounds every stream together; default DefaultMaxStreams.
	Total int
	// PerPerson bounds the streams of one person signed in through the
	// OIDC provider, all their sessions together; default
	// DefaultMaxStreamsPerPerson.
	PerPerson int
	// PerToken bounds the streams of one token (the API token or a viewer
	// token), as a bearer token and through its sessions together; default
	// DefaultMaxStreamsPerToken.
	PerToken int
	// PerAddress bounds the streams of one client IP address (behind a
	// proxy, the proxy's); default DefaultMaxStreamsPerAddr.
	PerAddress int
}

func (l *StreamLimits) setDefaults() error {
	for _, d := range []struct {
		v   *int
		def int
	}{{&l.Total, DefaultMaxStreams}, {&l.PerPerson, DefaultMaxStreamsPerPerson}, {&l.PerToken, DefaultMaxStreamsPerToken}, {&l.PerAddress, DefaultMaxStreamsPerAddr}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	return nil
}

// streamLimiter counts the open streams by limit.
type streamLimiter struct {
	lim  StreamLimits
	mu   sync.Mutex
	open map[streamKey]int
}

type streamKey struct{ limit, who string }

func newStreamLimiter(l StreamLimits) *streamLimiter {
	return &streamLimiter{lim: l, open: map[streamKey]int{}}
}

// keys returns the counters a stream of v from addr takes, with their limits.
func (sl *streamLimiter) keys(v visitor, addr string) ([]streamKey, []int) {
	keys := []streamKey{{"total", ""}, {"address", addr}}
	lims := []int{sl.lim.Total, sl.lim.PerAddress}
	if v.person {
		keys, lims = append(keys, streamKey{"person", v.who}), append(lims, sl.lim.PerPerson)
	} else {
		keys, lims = append(keys, streamKey{"token", v.who}), append(lims, sl.lim.PerToken)
	}
	return keys, lims
}

// acquire takes a stream for v from addr; when a limit is full it takes
// nothing and names that limit.
func (sl *streamLimiter) acquire(v visitor, addr string) (release func(), full string) {
	keys, lims := sl.keys(v, addr)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for i, k := range keys {
		if lims[i] > 0 && sl.open[k] >= lims[i] {
			return nil, k.limit
		}
	}
	for _, k := range keys {
		sl.open[k]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			sl.mu.Lock()
			defer sl.mu.Unlock()
			for _, k := range keys {
				if sl.open[k]--; sl.open[k] <= 0 {
					delete(sl.open, k)
				}
			}
		})
	}, ""
}

// clientAddr is the IP address of a request's client.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limitStream answers 429 when a stream would pass one of the stream
// limits, and closes that connection: a refused client holds nothing.
func (s *Server) limitStream(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		release, full := s.pages.streams.acquire(visitorFrom(r), clientAddr(r))
		if release == nil {
			s.pages.refused.WithLabelValues(full).Inc()
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "30")
			writeError(w, http.StatusTooManyRequests, "too many streams open ("+full+" limit): close one first")
			return
		}
		defer release()
		h(w, r)
	}
}
