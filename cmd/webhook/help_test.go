package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/cli"
)

// TestHelpAndVersion: -help lists the flags with sane defaults and
// examples; version, -version and --version print the version; a mistyped
// command gets a suggestion.
func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	call := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		err := run(t.Context(), args, &out, &errb)
		return cli.CodeAs("webhook", err, &errb), out.String(), errb.String()
	}
	code, out, _ := call("-help")
	for _, want := range []string{"Usage:\n  webhook [flags]", "\n  -listen string ", `(default ":8080")`, "(default 12h)", "\nExamples:\n  webhook "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("-help: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "0m0s") {
		t.Errorf("-help shows durations with their zero tail:\n%s", out)
	}
	if _, h, _ := call("help"); h != out {
		t.Errorf("help differs from -help:\n%s", h)
	}
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}, {"version", "-json"}} {
		if code, out, errs := call(args...); code != 0 || !strings.HasPrefix(out, "webhook ") && !strings.Contains(out, `"version":`) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if code, _, errs := call("verison"); code != 2 || !strings.Contains(errs, `unknown command "verison"; did you mean "version"?`) {
		t.Errorf("verison: exit %d\n%s", code, errs)
	}
	if code, out, _ := call("completion", "bash"); code != 0 || !strings.Contains(out, "-hmac-key-file") || !strings.Contains(out, "complete -o default -F _webhook webhook") {
		t.Errorf("completion bash: exit %d\n%s", code, out)
	}
}
