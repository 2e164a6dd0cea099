package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"

	"github.com/sethvargo/go-githubactions"
)

// SetOutputs sets the outputs of the GitHub Actions step, by name in
// order; outside GitHub Actions ($GITHUB_ACTIONS is not true) it does
// nothing. w gets what the runner reads when $GITHUB_OUTPUT is not set.
func SetOutputs(getenv func(string) string, w io.Writer, outputs map[string]string) {
	if getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	a := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(w))
	for _, k := range slices.Sorted(maps.Keys(outputs)) {
		a.SetOutput(k, outputs[k])
	}
}

// AddStepSummary adds markdown to the job summary in GitHub Actions, when
// the runner gives one ($GITHUB_STEP_SUMMARY); elsewhere it does nothing.
func AddStepSummary(getenv func(string) string, w io.Writer, markdown string) {
	if getenv("GITHUB_ACTIONS") != "true" || getenv("GITHUB_STEP_SUMMARY") == "" {
		return
	}
	a := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(w))
	a.AddStepSummary(markdown)
}

// WarningLogger prints the warnings logged to it as "warning: ..." lines
// on w and drops the other logs.
func WarningLogger(w io.Writer) *slog.Logger { return slog.New(warnings{w}) }

type warnings struct{ w io.Writer }

func (h warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h warnings) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h warnings) WithGroup(string) slog.Handler                { return h }

func (h warnings) Handle(_ context.Context, r slog.Record) error {
	_, err := fmt.Fprintf(h.w, "warning: %s\n", r.Message)
	return err
}
