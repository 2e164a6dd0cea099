package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// Writer prints reports.
type Writer struct {
	// Format is text (default) or json.
	Format string
	Out    io.Writer
	// Getenv reads the environment; in GitHub Actions (GITHUB_ACTIONS=true)
	// every finding is also an annotation on its line. nil: never.
	Getenv func(string) string
}

// Write prints the report: in text, one line per finding (drift findings
// followed by their diff) and a summary; in JSON, one object.
func (w *Writer) Write(rep *Report) error {
	if w.Getenv != nil && w.Getenv("GITHUB_ACTIONS") == "true" {
		gh := githubactions.New(githubactions.WithWriter(w.Out), githubactions.WithGetenv(w.Getenv))
		for _, f := range rep.Findings {
			fields := map[string]string{"title": "verify " + string(f.Check)}
			if f.File != "" {
				fields["file"] = f.File
			}
			if f.Line > 0 {
				fields["line"] = strconv.Itoa(f.Line)
			}
			if f.Column > 0 {
				fields["col"] = strconv.Itoa(f.Column)
			}
			a := gh.WithFieldsMap(fields)
			msg := annotation(&f)
			switch f.Severity {
			case SeverityError:
				a.Errorf("%s", msg)
			case SeverityWarning:
				a.Warningf("%s", msg)
			default:
				a.Noticef("%s", msg)
			}
		}
	}
	if w.Format == "json" {
		out := struct {
			OK       bool      `json:"ok"`
			Errors   int       `json:"errors"`
			Warnings int       `json:"warnings"`
			Findings []Finding `json:"findings"`
			Stats    Stats     `json:"stats"`
		}{!rep.Failed(), rep.Count(SeverityError), rep.Count(SeverityWarning), rep.Findings, rep.Stats}
		enc := json.NewEncoder(w.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.String())
		b.WriteByte('\n')
		if f.Diff != "" {
			b.WriteString(f.Diff)
			if !strings.HasSuffix(f.Diff, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	s := rep.Stats
	fmt.Fprintf(&b, "%d error(s), %d warning(s): %d files, %d Flux Kustomizations, %d paths built, %d objects",
		rep.Count(SeverityError), rep.Count(SeverityWarning), s.Files, s.Kustomizations, s.Built, s.Objects)
	if s.LiveObjects > 0 {
		fmt.Fprintf(&b, ", %d checked in the cluster", s.LiveObjects)
	}
	fmt.Fprintf(&b, " (%s)\n", s.Duration.Round(time.Millisecond))
	_, err := io.WriteString(w.Out, b.String())
	return err
}

// annotation is a finding's text without its position, which the
// annotation carries.
func annotation(f *Finding) string {
	var parts []string
	if f.Object != "" {
		parts = append(parts, f.Object)
	}
	if f.Field != "" {
		parts = append(parts, f.Field)
	}
	return strings.Join(append(parts, f.Message), ": ")
}

// SpecFindings turns the apps repository's problems into findings.
func SpecFindings(ps spec.Problems) []Finding {
	out := make([]Finding, 0, len(ps))
	for _, p := range ps {
		sev := SeverityError
		if p.Severity == spec.SeverityWarning {
			sev = SeverityWarning
		}
		out = append(out, Finding{
			Check: CheckSpec, Severity: sev, File: p.File, Line: p.Pos.Line, Column: p.Pos.Col, Field: p.Path, Message: p.Message,
		})
	}
	return out
}

// Merge adds findings to a report, keeping it sorted.
func (r *Report) Merge(fs []Finding) {
	r.Findings = sortFindings(append(r.Findings, fs...))
}
