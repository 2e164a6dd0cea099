package diag

import (
	"fmt"
	"strings"
)

// Severity of a diagnostic.
type Severity string

// Severities. An empty severity counts as an error.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rank orders severities: errors first, then warnings, then the rest.
func (s Severity) Rank() int {
	switch s {
	case Error, "":
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Diagnostic is one thing wrong, pointing into a user's file. Its JSON form
// is what render validate prints.
type Diagnostic struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// Path is the field path inside the document, such as
	// components[0].workload_spec.port.
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
	// Object is the Kind/name of the object concerned, when the file holds
	// several.
	Object string `json:"object,omitempty"`
	// Code names the rule or check that found it, such as drift or
	// policy/require_digests.
	Code string `json:"code,omitempty"`
	// Detail is printed under the diagnostic's line in text (a diff).
	Detail string `json:"-"`
}

// Position is how a text line shows where a diagnostic is.
type Position int

const (
	// LineColumn is file:line:col, always: spec problems always have all
	// three.
	LineColumn Position = iota
	// LineOnly is file:line, file alone when the line is unknown, nothing
	// without a file: verify's findings, most of which come from tools that
	// give no column.
	LineOnly
)

// String formats d as file:line:col: severity: object: path: message,
// leaving out the parts d lacks and the severity of errors.
func (d *Diagnostic) String() string { return d.Text(LineColumn) }

// Error is String, so that a diagnostic can be returned as an error.
func (d *Diagnostic) Error() string { return d.String() }

// Text formats d as String does, with its position shown as p says.
func (d *Diagnostic) Text(p Position) string {
	var b strings.Builder
	switch {
	case p == LineColumn:
		fmt.Fprintf(&b, "%s:%d:%d: ", d.File, d.Line, d.Column)
	case d.File != "":
		b.WriteString(d.File)
		if d.Line > 0 {
			fmt.Fprintf(&b, ":%d", d.Line)
		}
		b.WriteString(": ")
	}
	if d.Severity != Error && d.Severity != "" {
		b.WriteString(string(d.Severity))
		b.WriteString(": ")
	}
	d.body(&b, true)
	return b.String()
}

// body writes object: path: message, the path only when withPath.
func (d *Diagnostic) body(b *strings.Builder, withPath bool) {
	if d.Object != "" {
		b.WriteString(d.Object)
		b.WriteString(": ")
	}
	if withPath && d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
}
