package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/cli"
)

func actionsEnv(t *testing.T, actions string) (getenv func(string) string, output, summary string) {
	t.Helper()
	dir := t.TempDir()
	output, summary = filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	env := map[string]string{"GITHUB_ACTIONS": actions, "GITHUB_OUTPUT": output, "GITHUB_STEP_SUMMARY": summary}
	return func(k string) string { return env[k] }, output, summary
}

func readOr(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestSetOutputsAndStepSummary(t *testing.T) {
	t.Parallel()
	for _, actions := range []string{"true", ""} {
		getenv, output, summary := actionsEnv(t, actions)
		var out strings.Builder
		cli.SetOutputs(getenv, &out, map[string]string{"b": "2", "a": "1"})
		cli.AddStepSummary(getenv, &out, "## review\n")
		got, sum := readOr(t, output), readOr(t, summary)
		if actions != "true" {
			if got != "" || sum != "" || out.Len() != 0 {
				t.Errorf("outside GitHub Actions: outputs %q, summary %q, out %q", got, sum, out.String())
			}
			continue
		}
		a, b := strings.Index(got, "a<<"), strings.Index(got, "b<<")
		if a < 0 || b < a || !strings.Contains(got, "\n1\n") || !strings.Contains(got, "\n2\n") {
			t.Errorf("outputs not set in order:\n%s", got)
		}
		if sum != "## review\n\n" { // the runner's library ends each addition with a newline
			t.Errorf("summary %q", sum)
		}
	}
}

func TestWarningLogger(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	log := cli.WarningLogger(&b)
	log.Info("cloning", "repo", "x")
	log.Warn("the cache is stale", "file", "y")
	log.Error("it broke")
	log.With("k", "v").WithGroup("g").Debug("detail")
	if want := "warning: the cache is stale\nwarning: it broke\n"; b.String() != want {
		t.Errorf("logged %q, want %q", b.String(), want)
	}
}
