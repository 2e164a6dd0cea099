package cli_test

import (
	"errors"
	"strings"
	"testing"

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
