package cli_test

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/cli"
)

func TestCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"nil", nil, cli.ExitOK, ""},
		{"plain error", errors.New("disk full"), cli.ExitUsage, "webhook: disk full\n"},
		{"usage", cli.Usagef("--format must be %s", "text"), cli.ExitUsage, "webhook: --format must be text\n"},
		{"failed, reported", cli.Failed(), cli.ExitFailed, ""},
		{"failed with a message", &cli.ExitError{Code: cli.ExitFailed, Err: errors.New("store down")}, cli.ExitFailed, "webhook: store down\n"},
		{"silent", &cli.ExitError{Code: cli.ExitUsage, Err: errors.New("flag"), Silent: true}, cli.ExitUsage, ""},
		{"wrapped", errors.Join(errors.New("a"), cli.Failed()), cli.ExitFailed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if got := cli.CodeAs("webhook", tt.err, &b); got != tt.code || b.String() != tt.stderr {
				t.Errorf("CodeAs = %d, printed %q; want %d, %q", got, b.String(), tt.code, tt.stderr)
			}
			b.Reset()
			want := strings.Replace(tt.stderr, "webhook:", "error:", 1)
			if got := cli.Code(tt.err, &b); got != tt.code || b.String() != want {
				t.Errorf("Code = %d, printed %q; want %d, %q", got, b.String(), tt.code, want)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		pos    []string
		min    int
		format string
		code   int // of the error; -1: none
		stderr string
	}{
		{name: "positional only", args: []string{"api", "web", "3"}, pos: []string{"api", "web", "3"}, min: -1, format: "text", code: -1},
		{name: "flags first", args: []string{"--min", "2", "api", "web"}, pos: []string{"api", "web"}, min: 2, format: "text", code: -1},
		{name: "flags between", args: []string{"api", "--min", "2", "web", "--format=json"}, pos: []string{"api", "web"}, min: 2, format: "json", code: -1},
		{name: "flags last", args: []string{"fleet", "-format", "json"}, pos: []string{"fleet"}, min: -1, format: "json", code: -1},
		{name: "after --", args: []string{"api", "--", "--min", "web"}, pos: []string{"api", "--min", "web"}, min: -1, format: "text", code: -1},
		{name: "nothing", args: nil, pos: nil, min: -1, format: "text", code: -1},
		{name: "unknown flag after a positional", args: []string{"api", "--nope"}, code: cli.ExitUsage, stderr: "flag provided but not defined: -nope"},
		{name: "bad value", args: []string{"--min", "x"}, code: cli.ExitUsage, stderr: `invalid value "x" for flag -min`},
		{name: "help", args: []string{"api", "-h"}, code: cli.ExitOK, stderr: "Usage of t:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr strings.Builder
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(&stderr)
			min := fs.Int("min", -1, "")
			format := fs.String("format", "text", "")
			pos, err := cli.ParseArgs(fs, tt.args)
			if tt.code >= 0 {
				ee, ok := errors.AsType[*cli.ExitError](err)
				if !ok || ee.Code != tt.code || !ee.Silent || !strings.Contains(stderr.String(), tt.stderr) {
					t.Fatalf("ParseArgs = %v (stderr %q), want a silent exit %d after printing %q", err, stderr.String(), tt.code, tt.stderr)
				}
				var b strings.Builder
				if cli.Code(err, &b) != tt.code || b.Len() > 0 {
					t.Errorf("Code printed %q", b.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.pos, pos); d != "" || *min != tt.min || *format != tt.format {
				t.Errorf("positional (-want +got):\n%s\nmin %d, format %s; want %d, %s", d, *min, *format, tt.min, tt.format)
			}
		})
	}
}
