package diag_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/diag"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var sample = []*diag.Diagnostic{
	{File: "apps/shop/app.yaml", Line: 7, Column: 9, Path: "components[0].port", Message: "must be ≤ 65535; got 70000", Severity: diag.Error},
	{File: "apps/shop/app.yaml", Line: 9, Column: 3, Message: "unknown field \"x\"", Severity: diag.Warning},
	{File: "fleet/deploy.yaml", Line: 16, Object: "Deployment/api", Path: "spec.replicas", Message: "differs", Severity: diag.Error, Code: "drift", Detail: "--- a\n+++ b"},
	{Message: "not dry-run: no cluster", Severity: diag.Info, Code: "dry-run"},
}

func TestWriterFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		format string
		env    map[string]string
		out    diag.Output
		want   string
	}{
		{name: "text with columns", out: diag.Output{Diagnostics: sample[:2]}, want: "" +
			"apps/shop/app.yaml:7:9: components[0].port: must be ≤ 65535; got 70000\n" +
			"apps/shop/app.yaml:9:3: warning: unknown field \"x\"\n"},
		{name: "text by line, detail and summary", out: diag.Output{Diagnostics: sample, Position: diag.LineOnly, Summary: "2 error(s)"}, want: "" +
			"apps/shop/app.yaml:7: components[0].port: must be ≤ 65535; got 70000\n" +
			"apps/shop/app.yaml:9: warning: unknown field \"x\"\n" +
			"fleet/deploy.yaml:16: Deployment/api: spec.replicas: differs\n" +
			"--- a\n+++ b\n" +
			"info: not dry-run: no cluster\n" +
			"2 error(s)\n"},
		{name: "text, nothing", out: diag.Output{}, want: ""},
		{name: "json list", format: "json", out: diag.Output{Diagnostics: sample[2:3]}, want: `[
  {
    "file": "fleet/deploy.yaml",
    "line": 16,
    "column": 0,
    "path": "spec.replicas",
    "message": "differs",
    "severity": "error",
    "object": "Deployment/api",
    "code": "drift"
  }
]
`},
		{name: "json empty list", format: "json", out: diag.Output{}, want: "[]\n"},
		{name: "json document", format: "json", out: diag.Output{Diagnostics: sample, JSON: map[string]any{"ok": false, "n": 4}}, want: "{\n  \"n\": 4,\n  \"ok\": false\n}\n"},
		{name: "annotations then text", env: map[string]string{"GITHUB_ACTIONS": "true"}, out: diag.Output{Diagnostics: sample, Position: diag.LineOnly, Tool: "verify"}, want: "" +
			"::error col=9,file=apps/shop/app.yaml,line=7,title=components[0].port::must be ≤ 65535; got 70000\n" +
			"::warning col=3,file=apps/shop/app.yaml,line=9,title=::unknown field \"x\"\n" +
			"::error file=fleet/deploy.yaml,line=16,title=verify drift::Deployment/api: spec.replicas: differs\n" +
			"::notice title=verify dry-run::not dry-run: no cluster\n" +
			"apps/shop/app.yaml:7: components[0].port: must be ≤ 65535; got 70000\n" +
			"apps/shop/app.yaml:9: warning: unknown field \"x\"\n" +
			"fleet/deploy.yaml:16: Deployment/api: spec.replicas: differs\n" +
			"--- a\n+++ b\n" +
			"info: not dry-run: no cluster\n"},
		{name: "annotations escape", env: map[string]string{"GITHUB_ACTIONS": "true"}, format: "json", out: diag.Output{
			Diagnostics: []*diag.Diagnostic{{File: "a,b.yaml", Line: 1, Column: 1, Path: "x:y", Message: "100%\nsure"}}, JSON: true,
		}, want: "::error col=1,file=a%2Cb.yaml,line=1,title=x%3Ay::100%25%0Asure\ntrue\n"},
		{name: "not in GitHub Actions", env: map[string]string{"GITHUB_ACTIONS": "false"}, out: diag.Output{Diagnostics: sample[:1]}, want: "" +
			"apps/shop/app.yaml:7:9: components[0].port: must be ≤ 65535; got 70000\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			w := &diag.Writer{Format: tt.format, Out: &b, Getenv: env(tt.env)}
			if err := w.Write(tt.out); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, b.String()); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
		})
	}
}

// many returns n diagnostics of severity s, in files named after it.
func many(n int, s diag.Severity) []*diag.Diagnostic {
	out := make([]*diag.Diagnostic, n)
	for i := range out {
		out[i] = &diag.Diagnostic{File: fmt.Sprintf("%s-%02d.yaml", s, i), Line: 1, Column: 1, Message: "bad", Severity: s}
	}
	return out
}

// counts returns how many annotations of each command the output holds,
// the files they name, and its other lines.
func counts(out string) (map[string]int, []string, []string) {
	n := map[string]int{}
	var files, rest []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cmd, props, ok := strings.Cut(strings.TrimPrefix(l, "::"), " ")
		if !strings.HasPrefix(l, "::") || !ok {
			rest = append(rest, l)
			continue
		}
		n[cmd]++
		for _, p := range strings.Split(strings.SplitN(props, "::", 2)[0], ",") {
			if f, ok := strings.CutPrefix(p, "file="); ok {
				files = append(files, f)
			}
		}
	}
	return n, files, rest
}

func TestAnnotationLimits(t *testing.T) {
	t.Parallel()
	concat := func(lists ...[]*diag.Diagnostic) []*diag.Diagnostic {
		var out []*diag.Diagnostic
		for _, l := range lists {
			out = append(out, l...)
		}
		return out
	}
	tests := []struct {
		name  string
		ds    []*diag.Diagnostic
		tally string // the job's tally file before, if any
		want  map[string]int
		more  string
		first string // file of the first annotation
	}{
		{name: "60 errors", ds: many(60, diag.Error), want: map[string]int{"error": 10},
			more: "… and 50 more errors not annotated", first: "error-00.yaml"},
		{name: "under the limits", ds: concat(many(10, diag.Error), many(10, diag.Warning), many(10, diag.Info)),
			want: map[string]int{"error": 10, "warning": 10, "notice": 10}, first: "error-00.yaml"},
		{name: "each kind on its own", ds: concat(many(3, diag.Error), many(11, diag.Warning), many(12, diag.Info)),
			want: map[string]int{"error": 3, "warning": 10, "notice": 10}, more: "… and 1 more warning, 2 more notices not annotated", first: "error-00.yaml"},
		{name: "the job's budget", ds: concat(many(8, diag.Error), many(8, diag.Warning)), tally: `"__run" 10 10 10 45` + "\n",
			want: map[string]int{"error": 5}, more: "… and 3 more errors, 8 more warnings not annotated", first: "error-00.yaml"},
		{name: "the job's budget spent", ds: many(2, diag.Error), tally: `"__run" 0 0 0 50` + "\n", want: map[string]int{}, more: "… and 2 more errors not annotated"},
		{name: "the step's budget", ds: concat(many(8, diag.Error), many(8, diag.Warning)), tally: `"lint" 4 9 0 13` + "\n",
			want: map[string]int{"error": 6, "warning": 1}, more: "… and 2 more errors, 7 more warnings not annotated", first: "error-00.yaml"},
		{name: "a tally that is not ours", ds: many(12, diag.Warning), tally: "x",
			want: map[string]int{"warning": 10}, more: "… and 2 more warnings not annotated", first: "warning-00.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.tally != "" {
				if err := os.WriteFile(filepath.Join(dir, diag.TallyFile), []byte(tt.tally), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var b strings.Builder
			w := &diag.Writer{Format: "json", Out: &b, Getenv: env(map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_TEMP": dir, "GITHUB_ACTION": "lint"})}
			if err := w.Write(diag.Output{Diagnostics: tt.ds, JSON: len(tt.ds)}); err != nil {
				t.Fatal(err)
			}
			n, files, rest := counts(b.String())
			if d := cmp.Diff(tt.want, n); d != "" {
				t.Errorf("annotations (-want +got):\n%s", d)
			}
			if len(files) > 0 && files[0] != tt.first {
				t.Errorf("first annotation on %s, want %s", files[0], tt.first)
			}
			wantRest := []string{fmt.Sprint(len(tt.ds))}
			if tt.more != "" {
				wantRest = append([]string{tt.more}, wantRest...)
			}
			if d := cmp.Diff(wantRest, rest); d != "" {
				t.Errorf("other lines (-want +got):\n%s", d)
			}
		})
	}
}

// Past the limits a diagnostic is not annotated, but the text still has it.
func TestAnnotationLimitsKeepText(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := &diag.Writer{Out: &b, Getenv: env(map[string]string{"GITHUB_ACTIONS": "true"})}
	ds := many(60, diag.Error)
	if err := w.Write(diag.Output{Diagnostics: ds}); err != nil {
		t.Fatal(err)
	}
	n, _, rest := counts(b.String())
	if n["error"] != 10 || len(rest) != 61 || rest[0] != "… and 50 more errors not annotated" {
		t.Fatalf("%d annotations, %d other lines:\n%s", n["error"], len(rest), b.String())
	}
	for i, d := range ds {
		if rest[i+1] != d.String() {
			t.Errorf("line %d: %q, want %q", i+1, rest[i+1], d.String())
		}
	}
}

// Runs in one job share GitHub's limits: 10 of each kind a step, 50 in all.
func TestAnnotationTally(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	all := func(n int) []*diag.Diagnostic {
		return append(append(many(n, diag.Error), many(n, diag.Warning)...), many(n, diag.Info)...)
	}
	steps := []struct {
		step string
		ds   []*diag.Diagnostic
		want map[string]int
		more string
	}{
		{"lint", many(12, diag.Error), map[string]int{"error": 10}, "… and 2 more errors not annotated"},
		{"lint", all(3), map[string]int{"warning": 3, "notice": 3}, "… and 3 more errors not annotated"}, // the same step
		{"verify", all(12), map[string]int{"error": 10, "warning": 10, "notice": 10}, "… and 2 more errors, 2 more warnings, 2 more notices not annotated"},
		{"__run", all(1), map[string]int{"error": 1, "warning": 1, "notice": 1}, ""},
		{"__run_2", all(5), map[string]int{"error": 1}, "… and 4 more errors, 5 more warnings, 5 more notices not annotated"}, // 50 in the job
		{"__run_3", all(1), map[string]int{}, "… and 1 more error, 1 more warning, 1 more notice not annotated"},
	}
	for i, s := range steps {
		var b strings.Builder
		w := &diag.Writer{Out: &b, Getenv: env(map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_TEMP": dir, "GITHUB_ACTION": s.step})}
		if err := w.Write(diag.Output{Diagnostics: s.ds}); err != nil {
			t.Fatal(err)
		}
		n, _, rest := counts(b.String())
		if d := cmp.Diff(s.want, n); d != "" {
			t.Errorf("run %d (%s): annotations (-want +got):\n%s", i, s.step, d)
		}
		if more := rest[0]; s.more != "" && more != s.more {
			t.Errorf("run %d (%s): %q, want %q", i, s.step, more, s.more)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, diag.TallyFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"__run_2" 1 0 0 50` + "\n"; string(got) != want {
		t.Errorf("tally %q, want %q", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, diag.TallyFile+".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// Outside a runner (no step name) nothing is kept.
	w := &diag.Writer{Out: &strings.Builder{}, Getenv: env(map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_TEMP": dir})}
	if err := w.Write(diag.Output{Diagnostics: all(1)}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, diag.TallyFile)); string(again) != string(got) {
		t.Errorf("tally changed without GITHUB_ACTION: %q", again)
	}

	// A tally that cannot be written is an error.
	w = &diag.Writer{Out: &strings.Builder{}, Getenv: env(map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_TEMP": filepath.Join(dir, "missing"), "GITHUB_ACTION": "x"})}
	if err := w.Write(diag.Output{Diagnostics: all(1)}); err == nil || !strings.Contains(err.Error(), "counting the annotations") {
		t.Errorf("Write with no $RUNNER_TEMP folder = %v", err)
	}
}

func TestDiagnosticText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d        diag.Diagnostic
		col, row string // LineColumn, LineOnly
	}{
		{diag.Diagnostic{File: "a.yaml", Line: 3, Column: 5, Path: "x", Message: "m"}, "a.yaml:3:5: x: m", "a.yaml:3: x: m"},
		{diag.Diagnostic{File: "a.yaml", Message: "m", Severity: diag.Warning}, "a.yaml:0:0: warning: m", "a.yaml: warning: m"},
		{diag.Diagnostic{Object: "Deployment/x", Message: "m", Severity: diag.Info}, ":0:0: info: Deployment/x: m", "info: Deployment/x: m"},
		{diag.Diagnostic{File: "a.yaml", Line: 2, Message: "m", Severity: diag.Error, Code: "yaml"}, "a.yaml:2:0: m", "a.yaml:2: m"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.col {
			t.Errorf("String() = %q, want %q", got, tt.col)
		}
		if got := tt.d.Text(diag.LineOnly); got != tt.row {
			t.Errorf("Text(LineOnly) = %q, want %q", got, tt.row)
		}
	}
}

func ExampleWriter_Write() {
	w := &diag.Writer{Out: os.Stdout, Getenv: env(map[string]string{"GITHUB_ACTIONS": "true"})}
	_ = w.Write(diag.Output{Diagnostics: []*diag.Diagnostic{
		{File: "apps/shop/api/app.yaml", Line: 14, Column: 9, Path: "components[1].workload_spec.port", Message: "must be ≤ 65535"},
	}})
	// Output:
	// ::error col=9,file=apps/shop/api/app.yaml,line=14,title=components[1].workload_spec.port::must be ≤ 65535
	// apps/shop/api/app.yaml:14:9: components[1].workload_spec.port: must be ≤ 65535
}
