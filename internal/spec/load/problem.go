package load

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
)

// Problems is a list of problems, each a diag.Diagnostic pointing into the
// user's file with its field path; the list is itself an error when it
// holds an error.
type Problems []*diag.Diagnostic

// problem is an error in file at pos, about the file rather than a field.
func problem(file string, pos Pos, msg string) *diag.Diagnostic {
	return &diag.Diagnostic{File: file, Line: pos.Line, Column: pos.Col, Message: msg, Severity: diag.Error}
}

// posOf returns where p points.
func posOf(p *diag.Diagnostic) Pos { return Pos{p.Line, p.Column} }

// setPos points p at pos.
func setPos(p *diag.Diagnostic, pos Pos) { p.Line, p.Column = pos.Line, pos.Col }

// Add appends a problem at the value of path in doc.
func (ps *Problems) Add(doc *Document, path Path, format string, args ...any) {
	ps.AddAt(doc, doc.Pos(path), path, diag.Error, fmt.Sprintf(format, args...))
}

// AddKey appends a problem at the key of path in doc.
func (ps *Problems) AddKey(doc *Document, path Path, format string, args ...any) {
	ps.AddAt(doc, doc.KeyPos(path), path, diag.Error, fmt.Sprintf(format, args...))
}

// Warn appends a warning at the value of path in doc.
func (ps *Problems) Warn(doc *Document, path Path, format string, args ...any) {
	ps.AddAt(doc, doc.Pos(path), path, diag.Warning, fmt.Sprintf(format, args...))
}

// WarnKey appends a warning at the key of path in doc.
func (ps *Problems) WarnKey(doc *Document, path Path, format string, args ...any) {
	ps.AddAt(doc, doc.KeyPos(path), path, diag.Warning, fmt.Sprintf(format, args...))
}

// AddAt appends a problem of severity sev at pos in doc, about path.
func (ps *Problems) AddAt(doc *Document, pos Pos, path Path, sev diag.Severity, msg string) {
	*ps = append(*ps, &diag.Diagnostic{File: doc.File, Line: pos.Line, Column: pos.Col, Path: path.String(), Message: msg, Severity: sev})
}

// AddErr appends err: its problems when it holds some, else a problem at
// the start of file.
func (ps *Problems) AddErr(file string, err error) {
	var p *diag.Diagnostic
	var list Problems
	switch {
	case errors.As(err, &list):
		*ps = append(*ps, list...)
	case errors.As(err, &p):
		if p.Severity == "" {
			p.Severity = diag.Error
		}
		*ps = append(*ps, p)
	default:
		*ps = append(*ps, problem(file, Pos{1, 1}, err.Error()))
	}
}

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	return slices.ContainsFunc(ps, func(p *diag.Diagnostic) bool { return p.Severity != diag.Warning })
}

// Sort orders problems by file, line, column and message, and drops exact
// duplicates.
func (ps Problems) Sort() Problems {
	slices.SortStableFunc(ps, func(a, b *diag.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
	return slices.CompactFunc(ps, func(a, b *diag.Diagnostic) bool {
		// The same text: compared field by field, formatted only when the
		// positions alone differ (a position may not be printed).
		if a.File != b.File || a.Path != b.Path || a.Message != b.Message || cmp.Or(a.Severity, diag.Error) != cmp.Or(b.Severity, diag.Error) {
			return false
		}
		return a.Line == b.Line && a.Column == b.Column || a.Error() == b.Error()
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
