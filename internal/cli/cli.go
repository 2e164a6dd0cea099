// Package cli holds what the commands share: exit codes carried by errors,
// flags placed anywhere among the arguments, per-command help, suggestions
// for mistyped commands and shell completion scripts (Help), finding the
// apps repository from paths the user gave and refusing folders that are
// none (RequireApps, RequireFleet), progress on stderr (Progress,
// ProgressLogger), and printing spec problems (through package diag).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailed  = 1 // invalid specs, drift, findings
	ExitUsage   = 2 // bad flags or arguments, I/O errors
	ExitSilence = -1
)

// ExitError carries an exit code; its message was already printed when
// Silent is set.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return "exit " + strconv.Itoa(e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Usagef is a usage error (exit 2).
func Usagef(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Failed is an already reported failure (exit 1).
func Failed() error { return &ExitError{Code: ExitFailed, Silent: true} }

// Code returns the exit code for err and prints it to stderr as
// "error: …" unless it was printed already. An error without a code is a
// usage or I/O error (exit 2).
func Code(err error, stderr io.Writer) int { return CodeAs("error", err, stderr) }

// CodeAs is Code printing "name: …", for a server whose log reads better
// with its name.
func CodeAs(name string, err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if !ee.Silent && ee.Err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitUsage
}

// ParseFlags parses args into fs. -h and --help are not errors (exit 0);
// the flag package has printed the usage or the error already.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &ExitError{Code: ExitOK, Silent: true}
		}
		return &ExitError{Code: ExitUsage, Err: err, Silent: true}
	}
	return nil
}

// ParseArgs parses flags placed anywhere among the positional arguments,
// as ParseFlags does, and returns the positional ones; after "--" every
// argument is positional.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := ParseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if i := len(args) - len(rest); i > 0 && args[i-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// FindRoot returns the apps repository holding path: the nearest folder at
// or above it with an apps/ folder or a platform file. A folder with neither
// is taken as the root when nothing above has one.
func FindRoot(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	start := abs
	if !st.IsDir() {
		start = filepath.Dir(abs)
	}
	for dir := start; ; {
		if isRoot(dir) {
			return rel(dir), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return rel(start), nil
		}
		dir = parent
	}
}

func isRoot(dir string) bool {
	if st, err := os.Stat(filepath.Join(dir, "apps")); err == nil && st.IsDir() {
		return true
	}
	for _, n := range load.PlatformFileNames {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

func rel(dir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	if r, err := filepath.Rel(wd, dir); err == nil && !filepath.IsAbs(r) && len(r) < len(dir) {
		return filepath.ToSlash(r)
	}
	return dir
}

// Reporter prints spec problems the way render validate does.
type Reporter struct {
	Format string // text or json
	Out    io.Writer
	Getenv func(string) string
}

// Report prints the problems: in text one a line, in JSON one object with
// them, whether they leave the specs valid, and the summary's entries; in
// GitHub Actions every problem is also an annotation on its line.
func (r *Reporter) Report(ps load.Problems, summary map[string]any) error {
	doc := map[string]any{"valid": !ps.HasErrors()}
	maps.Copy(doc, summary)
	doc["problems"] = append([]*diag.Diagnostic{}, ps...) // [] rather than null
	w := &diag.Writer{Format: r.Format, Out: r.Out, Getenv: r.Getenv}
	return w.Write(diag.Output{Diagnostics: ps, JSON: doc})
}
