package spec

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
)

// Severity of a problem.
type Severity = diag.Severity

// Severities.
const (
	SeverityError   = diag.Error
	SeverityWarning = diag.Warning
)

// Problem is one thing wrong with a spec, pointing into the user's file.
type Problem struct {
	File     string   `json:"file"`
	Pos      Pos      `json:"-"`
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
	Severity Severity `json:"severity,omitempty"`
}

// Error formats the problem as file:line:col: path: message.
func (p *Problem) Error() string {
	d := p.Diagnostic()
	return d.String()
}

// Diagnostic is the problem as the commands print it; a problem without a
// severity is an error.
func (p *Problem) Diagnostic() diag.Diagnostic {
	return diag.Diagnostic{
		File: p.File, Line: p.Pos.Line, Column: p.Pos.Col, Path: p.Path, Message: p.Message,
		Severity: cmp.Or(p.Severity, SeverityError),
	}
}

// Diagnostics returns the problems as the commands print them.
func (ps Problems) Diagnostics() []diag.Diagnostic {
	out := make([]diag.Diagnostic, len(ps))
	for i, p := range ps {
		out[i] = p.Diagnostic()
	}
	return out
}

// Problems is a list of problems, itself an error when it holds an error.
type Problems []*Problem

// Add appends a problem at the value of path in doc.
func (ps *Problems) Add(doc *Document, path Path, format string, args ...any) {
	*ps = append(*ps, &Problem{File: doc.File, Pos: doc.Pos(path), Path: path.String(), Message: fmt.Sprintf(format, args...), Severity: SeverityError})
}

// AddKey appends a problem at the key of path in doc.
func (ps *Problems) AddKey(doc *Document, path Path, format string, args ...any) {
	*ps = append(*ps, &Problem{File: doc.File, Pos: doc.KeyPos(path), Path: path.String(), Message: fmt.Sprintf(format, args...), Severity: SeverityError})
}

// Warn appends a warning at the value of path in doc.
func (ps *Problems) Warn(doc *Document, path Path, format string, args ...any) {
	*ps = append(*ps, &Problem{File: doc.File, Pos: doc.Pos(path), Path: path.String(), Message: fmt.Sprintf(format, args...), Severity: SeverityWarning})
}

// WarnKey appends a warning at the key of path in doc.
func (ps *Problems) WarnKey(doc *Document, path Path, format string, args ...any) {
	*ps = append(*ps, &Problem{File: doc.File, Pos: doc.KeyPos(path), Path: path.String(), Message: fmt.Sprintf(format, args...), Severity: SeverityWarning})
}

// AddErr appends err: its problems when it holds some, else a problem at
// the start of file.
func (ps *Problems) AddErr(file string, err error) {
	var p *Problem
	var list Problems
	switch {
	case errors.As(err, &list):
		*ps = append(*ps, list...)
	case errors.As(err, &p):
		if p.Severity == "" {
			p.Severity = SeverityError
		}
		*ps = append(*ps, p)
	default:
		*ps = append(*ps, &Problem{File: file, Pos: Pos{1, 1}, Message: err.Error(), Severity: SeverityError})
	}
}

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	return slices.ContainsFunc(ps, func(p *Problem) bool { return p.Severity != SeverityWarning })
}

// Sort orders problems by file, line, column and message, and drops exact
// duplicates.
func (ps Problems) Sort() Problems {
	slices.SortStableFunc(ps, func(a, b *Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
	return slices.CompactFunc(ps, func(a, b *Problem) bool {
		// The same text: compared field by field, formatted only when the
		// positions alone differ (a position may not be printed).
		if a.File != b.File || a.Path != b.Path || a.Message != b.Message || cmp.Or(a.Severity, SeverityError) != cmp.Or(b.Severity, SeverityError) {
			return false
		}
		return a.Pos == b.Pos || a.Error() == b.Error()
	})
}

// Error lists every problem, one a line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Err returns ps as an error when it holds an error, else nil.
func (ps Problems) Err() error {
	if ps.HasErrors() {
		return ps
	}
	return nil
}
