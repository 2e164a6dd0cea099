package actiontest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// runScripts returns the run: scripts of a workflow (jobs.*.steps[].run) or
// of a composite action (runs.steps[].run), with the line each starts on.
func runScripts(doc []byte) (map[int]string, error) {
	var f struct {
		Jobs map[string]struct {
			Steps []struct {
				Run yaml.Node `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
		Runs struct {
			Steps []struct {
				Run yaml.Node `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(doc, &f); err != nil {
		return nil, err
	}
	scripts := map[int]string{}
	add := func(n yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			scripts[n.Line] = n.Value
		}
	}
	for _, j := range f.Jobs {
		for _, s := range j.Steps {
			add(s.Run)
		}
	}
	for _, s := range f.Runs.Steps {
		add(s.Run)
	}
	return scripts, nil
}

// TestRunScriptsHaveNoExpressions checks that no run: script of the action
// or of the example workflows holds a ${{ }} expression: the runner pastes
// its value into the script before the shell reads it (script injection);
// values must come in through env: instead.
func TestRunScriptsHaveNoExpressions(t *testing.T) {
	t.Parallel()
	for _, file := range workflowFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			scripts, err := runScripts(b)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "run:") && len(scripts) == 0 {
				t.Fatal("the file has run: keys but none was read as a script")
			}
			for line, s := range scripts {
				if strings.Contains(s, "${{") {
					t.Errorf("%s:%d: run: script holds a ${{ }} expression; pass it through env:", file, line)
				}
			}
		})
	}
}

// workflowFiles returns the example workflows, the project's own workflows
// and action.yml.
func workflowFiles(t *testing.T) []string {
	t.Helper()
	examples, err := filepath.Glob("../../examples/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	own, err := filepath.Glob("../../.github/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 || len(own) < 2 {
		t.Fatalf("workflows: %v %v", examples, own)
	}
	return append(append(examples, own...), "../../action.yml")
}

var usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)(?:\s+#\s*(\S+))?`)

// unpinned returns the uses: lines of a workflow or action whose action is
// not pinned to a full commit hash with the release named in a comment.
// Local actions (./...) and, in the examples, fleetwright itself (the
// reader picks the release) are exempt.
func unpinned(doc string, example bool) []string {
	var bad []string
	for i, line := range strings.Split(doc, "\n") {
		m := usesLine.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[1], "./") {
			continue
		}
		action, ref, _ := strings.Cut(m[1], "@")
		if example && action == "fleetwright/fleetwright" {
			continue
		}
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(ref) || !strings.HasPrefix(m[2], "v") {
			bad = append(bad, fmt.Sprintf("%d: %s", i+1, strings.TrimSpace(line)))
		}
	}
	return bad
}

// TestActionsPinned checks that every third-party action the project and
// its examples use is pinned by commit, a moved tag cannot change it.
func TestActionsPinned(t *testing.T) {
	t.Parallel()
	for _, file := range workflowFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range unpinned(string(b), strings.Contains(file, "examples/")) {
			t.Errorf("%s:%s: pin the action by commit: uses: OWNER/NAME@<40-hex commit> # vX.Y.Z", file, l)
		}
	}
	doc := "steps:\n  - uses: actions/checkout@v4\n  - uses: actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5\n" +
		"  - uses: actions/setup-go@b7ad1dad31e06c5925ef5d2fc7ad053ef454303e\n  - uses: ./local\n    with:\n      x: 1\n  - uses: fleetwright/fleetwright@v1\n"
	want := []string{"2: - uses: actions/checkout@v4", "4: - uses: actions/setup-go@b7ad1dad31e06c5925ef5d2fc7ad053ef454303e", "8: - uses: fleetwright/fleetwright@v1"}
	if got := unpinned(doc, false); !slices.Equal(got, want) {
		t.Errorf("unpinned = %q, want %q", got, want)
	}
}

// TestRunScriptsFindsExpressions checks runScripts on a workflow that has
// the pattern, so that the test above can fail.
func TestRunScriptsFindsExpressions(t *testing.T) {
	t.Parallel()
	doc := "jobs:\n  a:\n    steps:\n      - uses: actions/checkout@v4\n      - env:\n          X: ${{ inputs.x }}\n        run: echo \"$X\"\n      - run: |\n          echo \"${{ inputs.app }}\"\n"
	scripts, err := runScripts([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 2 || !strings.Contains(scripts[8], "${{ inputs.app }}") || strings.Contains(scripts[7], "${{") {
		t.Errorf("scripts = %v", scripts)
	}
}
