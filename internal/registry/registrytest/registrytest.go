// Package registrytest runs go-containerregistry's in-process registry over
// real HTTP on loopback for tests, and records the requests it serves so a
// test can assert what a client did (for example, that it pushed nothing).
package registrytest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Request is one request the server answered.
type Request struct {
	Method string
	Path   string
}

// Options configure a Server.
type Options struct {
	// Username and Password, when set, are required as HTTP basic auth on
	// every request.
	Username, Password string
	// Delay holds each request this long before serving it, so that
	// concurrent clients overlap.
	Delay time.Duration
}

// Server is a registry on loopback.
type Server struct {
	srv  *httptest.Server
	opts Options

	mu          sync.Mutex
	reqs        []Request
	inFlight    int
	maxInFlight int
}

// New starts a registry; it is closed when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s := Start(opts)
	t.Cleanup(s.Close)
	return s
}

// Start starts a registry that the caller must Close.
func Start(opts Options) *Server {
	s := &Server{opts: opts}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	s.srv = httptest.NewServer(s.wrap(reg))
	return s
}

func (s *Server) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path})
		s.inFlight++
		s.maxInFlight = max(s.maxInFlight, s.inFlight)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight--
			s.mu.Unlock()
		}()
		if s.opts.Delay > 0 {
			time.Sleep(s.opts.Delay)
		}
		if s.opts.Username != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != s.opts.Username || p != s.opts.Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Host is the registry's host:port, for image references.
func (s *Server) Host() string { return strings.TrimPrefix(s.srv.URL, "http://") }

// Close stops the server (tests of unreachable registries).
func (s *Server) Close() { s.srv.Close() }

// Requests returns the requests served so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Writes returns the served requests that could change the registry
// (anything but GET and HEAD).
func (s *Server) Writes() []Request {
	var w []Request
	for _, r := range s.Requests() {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w = append(w, r)
		}
	}
	return w
}

// MaxInFlight returns the largest number of requests served at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Reset forgets the recorded requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
	s.maxInFlight = 0
}
