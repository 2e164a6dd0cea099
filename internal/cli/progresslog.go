package cli

import (
	"context"
	"log/slog"
	"strings"
)

// ProgressLogger shows what a library logs as progress, the way render
// shows its own: an info record is a stage ("building Flux paths
// (kustomizations: 12)"), shown on a terminal and left out of CI logs; a
// warning or an error is a "warning: …" or "error: …" line that stays.
// Debug records are dropped.
func ProgressLogger(p *Progress) *slog.Logger {
	return slog.New(&progressHandler{p: p})
}

type progressHandler struct {
	p     *Progress
	attrs []slog.Attr
}

func (h *progressHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *progressHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}

func (h *progressHandler) WithGroup(string) slog.Handler { return h }

func (h *progressHandler) Handle(_ context.Context, r slog.Record) error {
	var parts []string
	add := func(a slog.Attr) bool {
		parts = append(parts, a.Key+": "+a.Value.Resolve().String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	msg := r.Message
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, ", ") + ")"
	}
	switch {
	case r.Level >= slog.LevelError:
		h.p.Print("error: " + msg)
	case r.Level >= slog.LevelWarn:
		h.p.Print("warning: " + msg)
	default:
		h.p.Stage(msg)
	}
	return nil
}
