package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// hub wakes event streams when a phase change was written.
type hub struct {
	mu sync.Mutex
	ch chan struct{}
}

func newHub() *hub { return &hub{ch: make(chan struct{})} }

// wait returns a channel closed by the next notify.
func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ch
}

func (h *hub) notify() {
	h.mu.Lock()
	close(h.ch)
	h.ch = make(chan struct{})
	h.mu.Unlock()
}

const streamPage = 500

// handleStream serves every phase change as a server-sent event, in order,
// each once. The event id is the change's sequence number; a client that
// reconnects with Last-Event-ID (or ?last_event_id=) gets every change after
// it. Without one the stream starts with the next change. Only the changes
// of projects the visitor may see are sent; ?project= and ?app= filter
// further.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// A stream outlives the server's read timeout; its write deadline moves
	// ahead per write (extendStream).
	if err := rc.SetReadDeadline(time.Time{}); err != nil {
		writeError(w, http.StatusInternalServerError, "streaming is not supported by this connection")
		return
	}
	if !s.openStream(rc) {
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	defer s.closeStream(rc)
	flush := func() bool { return s.extendStream(rc) && rc.Flush() == nil }
	ctx := r.Context()
	last, ok := s.streamStart(w, r)
	if !ok {
		return
	}
	project, app := r.URL.Query().Get("project"), r.URL.Query().Get("app")
	// With environment set, only that environment's changes ("": all).
	env := r.URL.Query().Get("environment")
	g := visitorFrom(r).grant
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	if !s.extendStream(rc) {
		return
	}
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\n: stream of phase changes after %d\n\n", last)
	if !flush() {
		return
	}
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()

	heartbeat := time.NewTicker(s.cfg.StreamHeartbeat)
	defer heartbeat.Stop()
	poll := time.NewTicker(s.cfg.StreamPoll)
	defer poll.Stop()
	for {
		wake := s.hub.wait()
		changes, err := s.cfg.Store.PhaseChanges(ctx, last, streamPage)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("reading phase changes", "err", err)
				if s.extendStream(rc) {
					fmt.Fprintf(w, "event: error\ndata: %q\n\n", "reading phase changes failed")
					_ = rc.Flush()
				}
			}
			return
		}
		if len(changes) > 0 && !s.extendStream(rc) {
			return
		}
		for _, c := range changes {
			last = c.Seq
			if !g.allows(c.App.Project) || (project != "" && c.App.Project != project) || (app != "" && c.App.Name != app) || (env != "" && c.Environment != env) {
				continue
			}
			data, err := json.Marshal(c)
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: phase\ndata: %s\n\n", c.Seq, data); err != nil {
				return
			}
		}
		if len(changes) > 0 && !flush() {
			return
		}
		if len(changes) == streamPage {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.stopping:
			return
		case <-wake:
		case <-poll.C:
		case <-heartbeat.C:
			if !s.extendStream(rc) {
				return
			}
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			if !flush() {
				return
			}
		}
	}
}

// streamStart returns the sequence number a stream starts after: the
// request's Last-Event-ID (or ?last_event_id=), else the latest change's;
// it answers the request itself when there is none.
func (s *Server) streamStart(w http.ResponseWriter, r *http.Request) (int64, bool) {
	lastID := r.Header.Get("Last-Event-ID")
	if lastID == "" {
		lastID = r.URL.Query().Get("last_event_id")
	}
	if lastID != "" {
		n, err := strconv.ParseInt(lastID, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "Last-Event-ID must be a phase change sequence number")
			return 0, false
		}
		return n, true
	}
	n, err := s.cfg.Store.LatestSeq(r.Context())
	if err != nil {
		s.log.Error("reading phase changes", "err", err)
		writeError(w, http.StatusServiceUnavailable, "reading phase changes failed")
		return 0, false
	}
	return n, true
}
