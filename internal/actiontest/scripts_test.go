package actiontest

import (
	"os"
	"path/filepath"
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
	files, err := filepath.Glob("../../examples/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example workflows")
	}
	files = append(files, "../../action.yml")
	for _, file := range files {
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
