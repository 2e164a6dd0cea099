package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Progress shows long work on stderr. On a terminal it keeps one status
// line that each stage and update rewrites in place (\r); lines that must
// stay are printed above it. Elsewhere (CI logs) it prints each update as a
// plain line and leaves stages out, so a log holds what happened, not how
// far along it was.
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	status   string // on screen, terminal only
}

// NewProgress writes to w; terminal says whether w is one (IsTerminal).
func NewProgress(w io.Writer, terminal bool) *Progress {
	return &Progress{w: w, terminal: terminal}
}

// IsTerminal reports whether w is a character device such as a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// maxStatus cuts status lines so that they fit a narrow terminal's line:
// a longer one would wrap, and \r returns only to the start of the last
// row.
const maxStatus = 79

// Stage shows what is under way; only a terminal shows it.
func (p *Progress) Stage(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		p.show(msg)
	}
}

// Update shows one step of counted work.
func (p *Progress) Update(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		p.show(msg)
		return
	}
	fmt.Fprintln(p.w, msg)
}

// Print writes a line that stays.
func (p *Progress) Print(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.terminal {
		fmt.Fprintln(p.w, msg)
		return
	}
	status := p.status
	p.clear()
	fmt.Fprintln(p.w, msg)
	if status != "" {
		p.show(status)
	}
}

// Done removes the status line, so that what follows starts on a clean
// line.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *Progress) show(msg string) {
	if r := []rune(msg); len(r) > maxStatus {
		msg = string(r[:maxStatus-1]) + "…"
	}
	// \r to the start of the line, the message, then erase what is left
	// of a longer previous one.
	fmt.Fprintf(p.w, "\r%s\x1b[K", msg)
	p.status = msg
}

func (p *Progress) clear() {
	if p.status != "" {
		io.WriteString(p.w, "\r\x1b[K")
		p.status = ""
	}
}

// StageWriter is an io.Writer whose lines, ended by \n or \r as a Git
// remote's progress messages are, each become a Stage: shown on a
// terminal, left out of logs.
func (p *Progress) StageWriter() io.Writer { return &stageWriter{p: p} }

// maxPartial bounds what a stageWriter keeps of a line not yet ended.
const maxPartial = 4 << 10

type stageWriter struct {
	p       *Progress
	partial []byte
}

func (w *stageWriter) Write(b []byte) (int, error) {
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexAny(w.partial, "\r\n")
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.partial[:i])); line != "" {
			w.p.Stage(line)
		}
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxPartial {
		w.partial = w.partial[:0]
	}
	return len(b), nil
}
