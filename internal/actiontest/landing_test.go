package actiontest

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflowSteps are the parts of a workflow's steps that say which token
// a push or a pull request is made with.
type workflowSteps struct {
	Jobs map[string]struct {
		Steps []struct {
			ID   string            `yaml:"id"`
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

var appTokenRef = regexp.MustCompile(`^\$\{\{\s*steps\.([A-Za-z0-9_-]+)\.outputs\.token\s*\}\}$`)

// untriggeredLandings returns the pushes and pull requests of a workflow
// made with the GITHUB_TOKEN, for which GitHub starts no workflow: a git
// push with the credentials actions/checkout left (its token input), gh pr
// create or merge (GH_TOKEN), and fleetwright's push and pull-request
// modes (fleet-token). A token that starts workflows is an App's token
// (actions/create-github-app-token, in the same job) or a secret other
// than GITHUB_TOKEN.
func untriggeredLandings(doc []byte) ([]string, error) {
	var wf workflowSteps
	if err := yaml.Unmarshal(doc, &wf); err != nil {
		return nil, err
	}
	var bad []string
	for _, job := range slices.Sorted(maps.Keys(wf.Jobs)) {
		steps := wf.Jobs[job].Steps
		apps := map[string]bool{}
		for _, s := range steps {
			if strings.HasPrefix(s.Uses, "actions/create-github-app-token@") && s.ID != "" {
				apps[s.ID] = true
			}
		}
		triggers := func(token string) bool {
			token = strings.TrimSpace(token)
			if m := appTokenRef.FindStringSubmatch(token); m != nil {
				return apps[m[1]]
			}
			return strings.HasPrefix(token, "${{ secrets.") && !strings.Contains(token, "GITHUB_TOKEN")
		}
		checkoutToken := ""
		for _, s := range steps {
			if strings.HasPrefix(s.Uses, "actions/checkout@") {
				checkoutToken = s.With["token"]
			}
		}
		for i, s := range steps {
			where := fmt.Sprintf("jobs.%s.steps[%d] (%s)", job, i, cmp.Or(s.Name, s.ID, s.Uses))
			if strings.Contains(s.Run, "git push") && !triggers(checkoutToken) {
				bad = append(bad, where+": git push with the checkout's GITHUB_TOKEN")
			}
			if (strings.Contains(s.Run, "gh pr create") || strings.Contains(s.Run, "gh pr merge")) && !triggers(s.Env["GH_TOKEN"]) {
				bad = append(bad, where+": gh pr with GH_TOKEN "+strconv.Quote(s.Env["GH_TOKEN"]))
			}
			if strings.HasPrefix(s.Uses, "fleetwright/fleetwright@") && (s.With["mode"] == "push" || s.With["mode"] == "pull-request") && !triggers(s.With["fleet-token"]) {
				bad = append(bad, where+": fleetwright lands the fleet without a fleet-token that starts workflows")
			}
		}
	}
	return bad, nil
}

// TestWorkflowsLandWithATokenThatTriggersWorkflows checks that what the
// example workflows push or open as a pull request starts the workflows
// that should follow: render.yml on the fleet pull request, and on the
// apps repository render.yml after lifecycle.yml's direct push and
// pull-request.yml on its pull request.
func TestWorkflowsLandWithATokenThatTriggersWorkflows(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../examples/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	landing := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bad, err := untriggeredLandings(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, m := range bad {
			t.Errorf("%s: %s: GitHub starts no workflow for it; use a GitHub App's token (see render.yml)", f, m)
		}
		if strings.Contains(string(b), "git push") || strings.Contains(string(b), "gh pr create") || strings.Contains(string(b), "mode: pull-request") {
			landing++
		}
	}
	if landing < 2 {
		t.Errorf("%d example workflows push or open pull requests; lifecycle.yml and render.yml do", landing)
	}
}

// TestUntriggeredLandingsFindsThem checks the check on workflows that land
// with the GITHUB_TOKEN, so that the test above can fail.
func TestUntriggeredLandingsFindsThem(t *testing.T) {
	t.Parallel()
	doc := `jobs:
  a:
    steps:
      - uses: actions/checkout@v7
      - name: push
        run: git push origin HEAD:main
      - name: pr
        env: {GH_TOKEN: "${{ secrets.GITHUB_TOKEN }}"}
        run: gh pr create --fill
      - name: land
        uses: fleetwright/fleetwright@v1
        with: {command: render, mode: pull-request}
  b:
    steps:
      - id: tok
        uses: actions/create-github-app-token@v3
      - uses: actions/checkout@v7
        with: {token: "${{ steps.tok.outputs.token }}"}
      - run: git push origin HEAD:main
      - env: {GH_TOKEN: "${{ steps.tok.outputs.token }}"}
        run: gh pr create --fill
      - uses: fleetwright/fleetwright@v1
        with: {command: render, mode: push, fleet-token: "${{ secrets.FLEET_TOKEN }}"}
  c:
    steps:
      - env: {GH_TOKEN: "${{ steps.nope.outputs.token }}"}
        run: gh pr merge --auto
`
	bad, err := untriggeredLandings([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"jobs.a.steps[1] (push): git push with the checkout's GITHUB_TOKEN",
		`jobs.a.steps[2] (pr): gh pr with GH_TOKEN "${{ secrets.GITHUB_TOKEN }}"`,
		"jobs.a.steps[3] (land): fleetwright lands the fleet without a fleet-token that starts workflows",
		`jobs.c.steps[0] (): gh pr with GH_TOKEN "${{ steps.nope.outputs.token }}"`,
	}
	if !slices.Equal(bad, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}
