package render_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
)

// TestValidationBuildSecrets: a Dockerfile that mounts a secret
// platform.yaml does not give to its project is refused at the RUN's line,
// naming the secret; the projects listed mount theirs.
func TestValidationBuildSecrets(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"platform.yaml":                   "policy: {require_requests: off, require_probes: off}\nbuild:\n  pin: false\n  secrets:\n    - {id: npm, env: NPM_TOKEN, projects: [shop]}\n    - {id: deploy, env: DEPLOY_KEY}\n",
		"apps/shop/web/app.yaml":          "name: web\ncomponents: [{name: site, type: workload, workload_spec: {build_mode: dockerfile, port: 80}}]\n",
		"apps/shop/web/Dockerfile":        "FROM scratch\nRUN --mount=type=secret,id=npm true\nRUN --mount=type=secret,id=deploy,required true\n",
		"apps/blog/site/app.yaml":         "name: site\ncomponents: [{name: main, type: workload, workload_spec: {build_mode: dockerfile, build: {dockerfile: build/Dockerfile}, port: 80}}]\n",
		"apps/blog/site/build/Dockerfile": "FROM scratch\nRUN --mount=type=secret,target=/run/secrets/npm true\nRUN --mount=type=secret,id=other true\n",
	})
	var v render.Validation
	if err := v.Add(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range v.Problems {
		got = append(got, p.Error())
	}
	slices.Sort(got)
	want := []string{
		`apps/blog/site/build/Dockerfile:2:1: RUN mounts secret "npm", which project blog may not mount: platform.yaml build.secrets[].projects gives it to shop only`,
		`apps/shop/web/Dockerfile:3:1: RUN mounts secret "deploy", which project shop may not mount: platform.yaml build.secrets[].projects gives it to no project`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if v.Errors() != 2 {
		t.Errorf("%d errors", v.Errors())
	}
}
