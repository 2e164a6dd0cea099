package render

import (
	"bytes"
	"strings"
	"sync"
)

// Progress hears about long work as it happens. The command decides how it
// shows (see cli.Progress); nil reports nothing.
type Progress interface {
	// Stage says what the pipeline does now ("generating 10000 app(s)");
	// the next stage or update replaces it.
	Stage(msg string)
	// Update is one step of counted work, such as a build event.
	Update(msg string)
	// Print is a line that stays: a build's failure, a builder's output.
	Print(msg string)
}

type noProgress struct{}

func (noProgress) Stage(string)  {}
func (noProgress) Update(string) {}
func (noProgress) Print(string)  {}

func progressOr(p Progress) Progress {
	if p == nil {
		return noProgress{}
	}
	return p
}

// lineWriter turns what a writer receives into whole lines for fn; a
// trailing partial line waits for its end.
type lineWriter struct {
	mu   sync.Mutex
	fn   func(string)
	part []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, b...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		w.fn(string(w.part[:i]))
		w.part = w.part[i+1:]
	}
	return len(b), nil
}

// buildEvents routes the build package's progress lines: events update,
// a failure and the output it quotes stay.
func buildEvents(p Progress) *lineWriter {
	return &lineWriter{fn: func(l string) {
		if strings.HasPrefix(l, "    | ") || strings.Contains(l, ": failed: ") {
			p.Print(l)
			return
		}
		p.Update(l)
	}}
}

// flush hands on a last line that has no end.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.part) > 0 {
		w.fn(string(w.part))
		w.part = nil
	}
}
