package cli

import (
	"bytes"
	"flag"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testHelp() *Help {
	return &Help{Program: "prog", Commands: []Command{
		{Summary: "prog does things.", Args: "[PATH]", Examples: []string{"prog --out x"}},
		{Name: "validate", Args: "[PATH...]", Summary: "check things", Examples: []string{"prog validate a"}},
		{Name: "version", Summary: "print the version"},
		HelpCommand("prog"),
		CompletionCommand("prog"),
	}}
}

// TestFlagsShowSaneDefaults: a zero default is not shown, nor one the
// usage states itself; strings are quoted and durations short.
func TestFlagsShowSaneDefaults(t *testing.T) {
	t.Parallel()
	h := testHelp()
	var out, errb bytes.Buffer
	fs := h.FlagSet("validate", &out, &errb, nil)
	fs.Int("replicas", -1, "replicas (default 1)")
	fs.Int("port", 0, "port")
	fs.String("format", "text", "output format: text or json")
	fs.Duration("ttl", 12*time.Hour, "how long")
	fs.Duration("keep", 90*24*time.Hour+30*time.Minute, "how long to keep")
	fs.Bool("check", false, "check only")
	fs.Func("secret", "a `ID=SRC` secret", func(string) error { return nil })
	if err := ParseFlags(fs, []string{"--help"}); err == nil || Code(err, &errb) != ExitOK {
		t.Fatalf("--help: %v", err)
	}
	want := `check things

Usage:
  prog validate [flags] [PATH...]

Flags:
  --check           check only
  --format string   output format: text or json (default "text")
  --keep duration   how long to keep (default 2160h30m)
  --port int        port
  --replicas int    replicas (default 1)
  --secret ID=SRC   a ID=SRC secret
  --ttl duration    how long (default 12h)

Examples:
  prog validate a
`
	if out.String() != want {
		t.Errorf("help:\n%s\nwant:\n%s", out.String(), want)
	}
	if errb.Len() != 0 {
		t.Errorf("help wrote to stderr: %q", errb.String())
	}
}

// TestWrongFlagPointsToHelp: a wrong flag prints the error and where help
// is, on stderr, and nothing on stdout.
func TestWrongFlagPointsToHelp(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	fs := testHelp().FlagSet("validate", &out, &errb, nil)
	fs.String("format", "text", "format")
	err := ParseFlags(fs, []string{"--nope"})
	if Code(err, &errb) != ExitUsage || out.Len() != 0 ||
		errb.String() != "flag provided but not defined: -nope\nRun 'prog validate --help' for its flags and examples.\n" {
		t.Errorf("err %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
}

// TestOnHelpGetsTheFlags: completion reads a command's flags through
// onHelp, and nothing is printed.
func TestOnHelpGetsTheFlags(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	var got []string
	fs := testHelp().FlagSet("validate", &out, &errb, func(fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) { got = append(got, f.Name) })
	})
	fs.String("format", "text", "format")
	fs.Bool("strict", false, "strict")
	_ = ParseFlags(fs, []string{"-h"})
	if strings.Join(got, ",") != "format,strict" || out.Len()+errb.Len() != 0 {
		t.Errorf("flags %v, stdout %q, stderr %q", got, out.String(), errb.String())
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	cmds := []string{"validate", "review", "version", "rollback", "resume", "new", "help"}
	for _, tc := range []struct {
		word string
		want string
	}{
		{"valdate", "validate"},
		{"valdiate", "validate"},
		{"verison", "version"},
		{"reveiw", "review"},
		{"roll", "rollback"},
		{"nwe", "new"},
		{"hepl", "help"},
		{"xyz", ""},
		{"deploy", ""},
	} {
		if got := strings.Join(Suggest(tc.word, cmds), ","); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	err := testHelp().UnknownCommand("valdate")
	if Code(err, &bytes.Buffer{}) != ExitUsage || err.Error() != "unknown command \"valdate\"; did you mean \"validate\"?\nRun 'prog help' for its commands." {
		t.Errorf("UnknownCommand: %v", err)
	}
}

// complete loads a bash completion script and returns what it offers for
// the command line words (the last one is being typed).
func complete(t *testing.T, script string, words ...string) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var line strings.Builder
	for _, w := range words {
		line.WriteString(" '" + w + "'")
	}
	prog := script + "\nCOMP_WORDS=(" + line.String() + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) +
		"\n" + "_" + words[0] + "\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestCompletion runs the bash script in bash, and checks the zsh and
// fish ones with their shells' syntax check where they are installed.
func TestCompletion(t *testing.T) {
	t.Parallel()
	h := testHelp()
	flags := map[string][]string{"": {"out", "check"}, "validate": {"format"}, "version": {"json"}}
	var b bytes.Buffer
	if err := h.Completion(&b, "bash", flags); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"prog", "val"}, "validate"},
		{[]string{"prog", "v"}, "validate\nversion"},
		{[]string{"prog", "validate", "--f"}, "--format"},
		{[]string{"prog", "--"}, "--check\n--out"},
		{[]string{"prog", "version", "-"}, "--json"},
		{[]string{"prog", "help", "va"}, "validate"},
		{[]string{"prog", "completion", "z"}, "zsh"},
	} {
		if got := complete(t, b.String(), tc.words...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.words, got, tc.want)
		}
	}
	for _, sh := range []struct{ name, check string }{{"zsh", "-n"}, {"fish", "--no-execute"}} {
		b.Reset()
		if err := h.Completion(&b, sh.name, flags); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "validate") || !strings.Contains(b.String(), "format") {
			t.Errorf("%s script lacks a command or a flag:\n%s", sh.name, b.String())
		}
		path, err := exec.LookPath(sh.name)
		if err != nil {
			continue
		}
		cmd := exec.Command(path, sh.check)
		cmd.Stdin = strings.NewReader(b.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s\n%s", sh.name, sh.check, err, out, b.String())
		}
	}
	if err := h.Completion(&b, "powershell", flags); Code(err, &bytes.Buffer{}) != ExitUsage {
		t.Errorf("an unknown shell: %v", err)
	}
}
