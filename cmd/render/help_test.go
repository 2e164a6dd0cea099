package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// TestHelp: render --help lists render's own flags; each command's --help
// and `help COMMAND` print that command's flags and examples; defaults
// read as they are.
func TestHelp(t *testing.T) {
	t.Parallel()
	r := runCmd(t, nil, "--help")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--help: exit %d, stderr %q", r.code, r.stderr)
	}
	golden.File(t, "testdata/help.txt", r.stdout)
	if h := runCmd(t, nil, "help"); h.code != 0 || h.stdout != r.stdout {
		t.Errorf("help: exit %d, differs from --help", h.code)
	}
	for _, cmd := range help().Names() {
		if cmd == "help" || cmd == "completion" {
			continue
		}
		h := runCmd(t, nil, "help", cmd)
		if h.code != 0 || !strings.Contains(h.stdout, "Usage:\n  render "+cmd+" [flags]") || !strings.Contains(h.stdout, "\nFlags:\n") || !strings.Contains(h.stdout, "\nExamples:\n  render "+cmd) {
			t.Errorf("help %s: exit %d\n%s%s", cmd, h.code, h.stdout, h.stderr)
		}
		args := []string{cmd, "--help"}
		if cmd == "template" {
			args = []string{"template", "capture", "--help"}
		}
		if c := runCmd(t, nil, args...); c.code != 0 || c.stdout != h.stdout {
			t.Errorf("%s: exit %d, differs from help %s:\n%s", args, c.code, cmd, c.stdout)
		}
	}
	n := runCmd(t, nil, "help", "new")
	if !regexp.MustCompile(`\n  --replicas int +replicas \(default 1\)\n`).MatchString(n.stdout) || strings.Contains(n.stdout, "(default -1)") {
		t.Errorf("help new shows --replicas' default oddly:\n%s", n.stdout)
	}
	if h := runCmd(t, nil, "help", "valdate"); h.code != 2 || !strings.Contains(h.stderr, `unknown command "valdate"; did you mean "validate"?`) {
		t.Errorf("help valdate: exit %d\n%s", h.code, h.stderr)
	}
	if h := runCmd(t, nil, "validate", "--nope"); h.code != 2 || !strings.Contains(h.stderr, "Run 'render validate --help' for its flags and examples.") {
		t.Errorf("validate --nope: exit %d\n%s", h.code, h.stderr)
	}
}

func TestVersionEverywhere(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		if r := runCmd(t, nil, args...); r.code != 0 || !strings.HasPrefix(r.stdout, "render ") || !strings.Contains(r.stdout, "\ngo:") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestCompletionScripts loads render's bash script in bash and completes
// commands and each command's flags; the zsh and fish scripts pass their
// shells' syntax check where those are installed.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	bash := runCmd(t, nil, "completion", "bash")
	if bash.code != 0 {
		t.Fatalf("completion bash: exit %d\n%s", bash.code, bash.stderr)
	}
	for _, tc := range []struct{ words, want string }{
		{"render vali", "validate"},
		{"render validate --f", "--format"},
		{"render --ch", "--check"},
		{"render rollback shop/api --to", "--to\n--token-file"},
		{"render template capture --pa", "--param"},
		{"render completion f", "fish"},
	} {
		words := strings.Fields(tc.words)
		script := bash.stdout + "\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" + string(rune('0'+len(words)-1)) +
			"\n_render\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script)
		cmd.Dir = t.TempDir() // no file names among the answers
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tc.want {
			t.Errorf("%q completes to %q (%v), want %q", tc.words, out, err, tc.want)
		}
	}
	for _, sh := range []struct{ name, check string }{{"zsh", "-n"}, {"fish", "--no-execute"}} {
		r := runCmd(t, nil, "completion", sh.name)
		if r.code != 0 || !strings.Contains(r.stdout, "validate") || !strings.Contains(r.stdout, "format") {
			t.Errorf("completion %s: exit %d\n%s", sh.name, r.code, r.stdout)
		}
		if path, err := exec.LookPath(sh.name); err == nil {
			cmd := exec.Command(path, sh.check)
			cmd.Stdin = strings.NewReader(r.stdout)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", sh.name, sh.check, err, out)
			}
		}
	}
	if r := runCmd(t, nil, "completion", "tcsh"); r.code != 2 || !strings.Contains(r.stderr, "bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d\n%s", r.code, r.stderr)
	}
}

// TestWrongFolderIsRefused: render and render validate in a folder with no
// apps/ and no spec say what they expected, and fail.
func TestWrongFolderIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"validate", dir}, {"--offline", dir}, {"validate", "../.."}} {
		r := runCmd(t, nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "is not an apps repository: expected an apps/ folder holding apps/<project>/<app>/app.yaml") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fleet")); err == nil {
		t.Error("render wrote a fleet in a folder that is no apps repository")
	}
	// An apps repository whose last app was deleted: no apps/ left (Git
	// keeps no empty folder), its platform.yaml stays; it renders, so that
	// Flux prunes the app.
	last := t.TempDir()
	golden.WriteFiles(t, last, map[string]string{"platform.yaml": "apps_domain: apps.test\n"})
	for _, args := range [][]string{{"validate", last}, {"--offline", last}} {
		if r := runCmd(t, nil, args...); r.code != 0 {
			t.Errorf("%v with platform.yaml and no app: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}

// TestNoPlatformSaysSo: an apps repository without platform.yaml renders
// with the defaults, and says so once.
func TestNoPlatformSaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	golden.WriteFiles(t, dir, map[string]string{"apps/shop/api/app.yaml": "name: api\ncomponents:\n  - name: web\n    type: workload\n" +
		"    workload_spec: {image: nginx:1.27, port: 80, ingress: {enabled: true}}\n"})
	r := runCmd(t, nil, "--offline", dir)
	if r.code != 0 || strings.Count(r.stderr, "has no platform.yaml: the defaults apply (hosts <app>-<project>.apps.example.com") != 1 {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	golden.WriteFiles(t, dir, map[string]string{"platform.yaml": "apps_domain: apps.test\n"})
	if r := runCmd(t, nil, "--offline", dir); r.code != 0 || strings.Contains(r.stderr, "platform.yaml") {
		t.Errorf("with platform.yaml: exit %d\n%s", r.code, r.stderr)
	}
}

// TestJournalInUserWords: a fleet folder left with an unreadable journal
// is named in words a user knows.
func TestJournalInUserWords(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "fleet")
	golden.WriteFiles(t, out, map[string]string{".fleetwright-journal": "not a journal\n"})
	r := runCmd(t, nil, "--offline", "--out", out, "../../examples")
	if r.code == 0 || !strings.Contains(r.stderr, "the fleet folder's record of an unfinished change (.fleetwright-journal)") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}
