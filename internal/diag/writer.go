package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// GitHub's limits on annotations: it shows at most StepLimit of each kind
// (error, warning, notice) from one step and JobLimit from all the steps of
// a job, and drops the rest.
const (
	StepLimit = 10
	JobLimit  = 50
)

// JobEnv carries, from one step of a GitHub Actions job to the later ones,
// how many annotations the Writer made: it appends JobEnv=n to the file
// $GITHUB_ENV names, which the runner reads between steps.
const JobEnv = "FLEETWRIGHT_ANNOTATIONS"

// Writer prints diagnostics.
type Writer struct {
	// Format is text (default) or json.
	Format string
	Out    io.Writer
	// Getenv reads the environment; in GitHub Actions (GITHUB_ACTIONS=true)
	// every diagnostic is also an annotation on its line, up to GitHub's
	// limits. nil: never.
	Getenv func(string) string
}

// Output is one report: its diagnostics, and what frames them.
type Output struct {
	Diagnostics []Diagnostic
	// JSON is the document the json format prints; nil prints the list of
	// diagnostics.
	JSON any
	// Summary is the text format's last line; empty: none.
	Summary string
	// Position is how text lines show where a diagnostic is.
	Position Position
	// Tool names the program in the title of the annotations of
	// diagnostics that have a code: "verify drift".
	Tool string
}

// Write prints the report. In GitHub Actions it first prints the
// annotations, and one line counting those that GitHub's limits leave out.
// Then in text it prints one line per diagnostic, each followed by its
// detail, and the summary; in JSON, the document.
func (w *Writer) Write(o Output) error {
	if w.Getenv != nil && w.Getenv("GITHUB_ACTIONS") == "true" {
		if err := w.annotate(o.Diagnostics, o.Tool); err != nil {
			return err
		}
	}
	if w.Format == "json" {
		doc := o.JSON
		if doc == nil {
			doc = append([]Diagnostic{}, o.Diagnostics...)
		}
		enc := json.NewEncoder(w.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	var b strings.Builder
	for i := range o.Diagnostics {
		d := &o.Diagnostics[i]
		b.WriteString(d.Text(o.Position))
		b.WriteByte('\n')
		if d.Detail != "" {
			b.WriteString(d.Detail)
			if !strings.HasSuffix(d.Detail, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	if o.Summary != "" {
		b.WriteString(o.Summary)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w.Out, b.String())
	return err
}

// The kinds of annotations, which GitHub limits each on its own.
var kinds = [...]struct{ command, noun string }{{"error", "error"}, {"warning", "warning"}, {"notice", "notice"}}

func kindOf(s Severity) int {
	return min(s.Rank(), len(kinds)-1)
}

// annotate prints the annotations GitHub's limits allow, in order, and a
// line counting the others.
func (w *Writer) annotate(ds []Diagnostic, tool string) error {
	used, _ := strconv.Atoi(w.Getenv(JobEnv))
	budget := max(0, JobLimit-used)
	var made, skipped [len(kinds)]int
	total := 0
	var b strings.Builder
	for i := range ds {
		k := kindOf(ds[i].Severity)
		if made[k] >= StepLimit || total >= budget {
			skipped[k]++
			continue
		}
		made[k]++
		total++
		b.WriteString(annotation(&ds[i], kinds[k].command, tool))
		b.WriteByte('\n')
	}
	var more []string
	for k, n := range skipped {
		if n > 0 {
			more = append(more, fmt.Sprintf("%d more %s%s", n, kinds[k].noun, plural(n)))
		}
	}
	if len(more) > 0 {
		fmt.Fprintf(&b, "… and %s not annotated\n", strings.Join(more, ", "))
	}
	if _, err := io.WriteString(w.Out, b.String()); err != nil {
		return err
	}
	if env := w.Getenv("GITHUB_ENV"); env != "" && total > 0 {
		return appendEnv(env, JobEnv, strconv.Itoa(used+total))
	}
	return nil
}

// annotation formats d as a workflow command. Its title is the tool and
// code when d has a code, else its field path; its message is the rest.
func annotation(d *Diagnostic, command, tool string) string {
	props := githubactions.CommandProperties{}
	if d.File != "" {
		props["file"] = d.File
	}
	if d.Line > 0 {
		props["line"] = strconv.Itoa(d.Line)
	}
	if d.Column > 0 {
		props["col"] = strconv.Itoa(d.Column)
	}
	var msg strings.Builder
	if d.Code != "" {
		props["title"] = strings.TrimSpace(tool + " " + d.Code)
		d.body(&msg, true)
	} else {
		props["title"] = d.Path
		d.body(&msg, false)
	}
	c := githubactions.Command{Name: command, Message: msg.String(), Properties: props}
	return c.String()
}

// appendEnv sets an environment variable for the job's later steps.
func appendEnv(file, key, value string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("recording the annotations made: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s=%s\n", key, value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recording the annotations made: %w", err)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
