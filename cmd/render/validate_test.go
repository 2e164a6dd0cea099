package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// In GitHub Actions, validate annotates at most 10 errors a step and counts
// the rest; the text still lists every problem.
func TestValidateAnnotationLimit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("apps/shop/api%02d/app.yaml", i)] = strings.Replace(badApp, "name: api", fmt.Sprintf("name: api%02d", i), 1)
	}
	golden.WriteFiles(t, root, files)
	env := map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_TEMP": t.TempDir(), "GITHUB_ACTION": "validate"}
	count := func(r result) (annotations, problems int, more string) {
		for _, l := range strings.Split(r.stdout, "\n") {
			switch {
			case strings.HasPrefix(l, "::error "):
				annotations++
			case strings.HasPrefix(l, "… and "):
				more = l
			case strings.HasSuffix(l, `unknown field "prot"; did you mean "port"?`):
				problems++
			}
		}
		return
	}

	r := runCmd(t, env, "validate", root)
	a, p, more := count(r)
	if r.code != 1 || a != 10 || p != 12 || more != "… and 2 more errors not annotated" {
		t.Errorf("exit %d, %d annotations, %d problems, %q; want 1, 10, 12 and 2 more\n%s", r.code, a, p, more, r.stdout)
	}
	first := filepath.Join(root, "apps/shop/api00/app.yaml")
	if !strings.HasPrefix(r.stdout, "::error col=7,file="+first+",line=7,title=components[0].workload_spec.prot::") {
		t.Errorf("the first annotation is not the first problem's:\n%s", r.stdout)
	}

	// A second run in the same step has no annotations left.
	r = runCmd(t, env, "validate", "--format", "json", root)
	a, _, more = count(r)
	if r.code != 1 || a != 0 || more != "… and 12 more errors not annotated" || !strings.Contains(r.stdout, `"valid": false`) {
		t.Errorf("second run: exit %d, %d annotations, %q\n%s", r.code, a, more, r.stdout)
	}
}
