package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// TallyFile, in $RUNNER_TEMP (which the runner empties for every job),
// holds the annotations made so far in the job: by kind for the step
// ($GITHUB_ACTION) that made the last ones, and in all. Writers in later
// runs, in the same step or later ones, keep to what GitHub still shows.
// Without $RUNNER_TEMP and $GITHUB_ACTION every Write starts afresh.
const TallyFile = "fleetwright-annotations"

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
	Diagnostics []*Diagnostic
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
			doc = append([]*Diagnostic{}, o.Diagnostics...)
		}
		enc := json.NewEncoder(w.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	var b strings.Builder
	for _, d := range o.Diagnostics {
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
func (w *Writer) annotate(ds []*Diagnostic, tool string) error {
	t, file := w.loadTally()
	var skipped [len(kinds)]int
	made := 0
	var b strings.Builder
	for _, d := range ds {
		k := kindOf(d.Severity)
		if t.step[k] >= StepLimit || t.job >= JobLimit {
			skipped[k]++
			continue
		}
		t.step[k]++
		t.job++
		made++
		b.WriteString(annotation(d, kinds[k].command, tool))
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
	if file != "" && made > 0 {
		return t.save(file)
	}
	return nil
}

// tally counts the annotations made: in the step, by kind, and in the job.
type tally struct {
	name string // the step's
	step [len(kinds)]int
	job  int
}

// loadTally reads the tally of the job, and returns its file; "" when
// there is none to keep.
func (w *Writer) loadTally() (tally, string) {
	dir, step := w.Getenv("RUNNER_TEMP"), w.Getenv("GITHUB_ACTION")
	t := tally{name: step}
	if dir == "" || step == "" {
		return t, ""
	}
	file := filepath.Join(dir, TallyFile)
	b, err := os.ReadFile(file)
	if err != nil {
		return t, file // none yet
	}
	var last tally
	if _, err := fmt.Sscanf(string(b), "%q %d %d %d %d\n", &last.name, &last.step[0], &last.step[1], &last.step[2], &last.job); err != nil {
		return t, file // not ours: start afresh
	}
	t.job = last.job
	if last.name == step {
		t.step = last.step
	}
	return t, file
}

// save replaces the tally file.
func (t *tally) save(file string) error {
	f, err := os.CreateTemp(filepath.Dir(file), TallyFile+".*")
	if err != nil {
		return fmt.Errorf("counting the annotations: %w", err)
	}
	_, err = fmt.Fprintf(f, "%q %d %d %d %d\n", t.name, t.step[0], t.step[1], t.step[2], t.job)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("counting the annotations: %w", err)
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
