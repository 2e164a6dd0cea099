package verify

import (
	"fmt"
	"strings"
	"time"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Output is the report for a diag.Writer: in text, one line per finding
// (drift findings followed by their diff) and a summary; in JSON, one
// object; in GitHub Actions, annotations titled "verify CHECK".
func (r *Report) Output() diag.Output {
	ds := make([]*diag.Diagnostic, len(r.Findings))
	for i := range r.Findings {
		ds[i] = r.Findings[i].printed()
	}
	doc := struct {
		OK       bool      `json:"ok"`
		Errors   int       `json:"errors"`
		Warnings int       `json:"warnings"`
		Findings []Finding `json:"findings"`
		Stats    Stats     `json:"stats"`
	}{!r.Failed(), r.Count(SeverityError), r.Count(SeverityWarning), r.Findings, r.Stats}
	var b strings.Builder
	s := r.Stats
	fmt.Fprintf(&b, "%d error(s), %d warning(s): %d files, %d Flux Kustomizations, %d paths built, %d objects",
		r.Count(SeverityError), r.Count(SeverityWarning), s.Files, s.Kustomizations, s.Built, s.Objects)
	if s.Artifacts > 0 {
		fmt.Fprintf(&b, ", %d artifacts rebuilt", s.Artifacts)
	}
	if s.InRegistry > 0 {
		fmt.Fprintf(&b, ", %d in the registry", s.InRegistry)
	}
	if s.LiveObjects > 0 {
		fmt.Fprintf(&b, ", %d checked in the cluster", s.LiveObjects)
	}
	fmt.Fprintf(&b, " (%s)", s.Duration.Round(time.Millisecond))
	return diag.Output{Diagnostics: ds, JSON: doc, Summary: b.String(), Position: diag.LineOnly, Tool: "verify"}
}

// SpecFindings turns the apps repository's problems into findings: the
// same diagnostics, each an error or a warning.
func SpecFindings(ps load.Problems) []Finding {
	out := make([]Finding, len(ps))
	for i, p := range ps {
		out[i] = Finding{Check: CheckSpec, Diagnostic: *p}
		if p.Severity != SeverityWarning {
			out[i].Severity = SeverityError
		}
	}
	return out
}

// Merge adds findings to a report, keeping it sorted.
func (r *Report) Merge(fs []Finding) {
	r.Findings = sortFindings(append(r.Findings, fs...))
}
