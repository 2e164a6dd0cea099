package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// With the apps repository, verify renders each preview again from the
// head commit its record names and compares: the preview as render
// preview wrote it has no drift, a hand edit of it is drift, and a
// preview whose head the apps repository lacks is not rendered again.
func TestPreviewDrift(t *testing.T) {
	t.Parallel()
	for name, fleet := range map[string]string{
		"git":       "fleet: {path: fleet}\n",
		"artifacts": "fleet: {path: fleet, artifacts: {repository: registry.example.com/fleet}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testPreviewDrift(t, fleet)
		})
	}
}

func testPreviewDrift(t *testing.T, fleet string) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("platform.yaml", "clusters: [{name: stage-eu}]\n"+fleet+"previews: {cluster: stage-eu, apps_domain: preview.example.com}\n")
	write("apps/shop/api/app.yaml", "name: api\ncomponents:\n  - {name: api, type: workload, workload_spec: {image: myorg/api:v1, port: 8080, ingress: {enabled: true}}}\n")
	gittest.Git(t, root, "init", "-q", "-b", "main")
	gittest.Git(t, root, "add", "-A")
	gittest.Git(t, root, "commit", "-q", "-m", "api")
	head := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))
	ctx := context.Background()
	repo, err := render.LoadRelease(ctx, root, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := render.NewLoader("")
	if err != nil {
		t.Fatal(err)
	}
	p, ps := l.PreviewOf(repo, 4, []string{"shop/api"})
	if ps.HasErrors() {
		t.Fatal(ps)
	}
	pf, _, err := render.RenderPreview(render.PreviewInput{Preview: p, Head: head, Now: time.Unix(1800000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	main, err := generate.Render(repo, generate.Options{Platform: &repo.Platform})
	if err != nil {
		t.Fatal(err)
	}
	files := main.Map()
	for _, x := range pf.Files {
		files[x.Path] = x.Data
	}
	apps := &Apps{Repo: repo, AtRelease: func(ctx context.Context, ref string, folders map[string]string) (*load.Repo, error) {
		return render.LoadRelease(ctx, root, ref, folders)
	}}
	var errs []string
	run := func(files map[string][]byte) []string {
		rep, err := Run(ctx, Options{FleetDir: golden.TempFiles(t, files), Display: "fleet", FleetPath: "fleet", Platform: &repo.Platform, Apps: apps})
		if err != nil {
			t.Fatal(err)
		}
		errs = nil
		for _, f := range rep.Findings {
			if f.Severity == SeverityError {
				errs = append(errs, f.String())
			}
		}
		return lines(rep, CheckDrift)
	}
	if got := run(files); len(got) != 0 || len(errs) != 0 {
		t.Errorf("findings on the preview as render preview wrote it:\n%s\n%s", strings.Join(got, "\n"), strings.Join(errs, "\n"))
	}
	deploy := "previews/stage-eu/pr-4/apps/stage-eu/shop-pr4/api/api/deployment-api-api.yaml"
	edited := cloneFiles(files)
	edit(t, edited, deploy, "image: myorg/api:v1", "image: evil/miner:v1")
	got := strings.Join(run(edited), "\n")
	if !strings.Contains(got, "fleet/"+deploy+":") || !strings.Contains(got, "differs from what preview pr-4's specs at "+head[:12]+" render") || !strings.Contains(got, "run render preview --pr 4") {
		t.Errorf("a hand edit of the preview:\n%s", got)
	}
	gone := cloneFiles(files)
	edit(t, gone, "previews/stage-eu/pr-4/preview.yaml", head, strings.Repeat("deadbeef", 5))
	if got := strings.Join(run(gone), "\n"); !strings.Contains(got, "preview pr-4 is not rendered again: the apps repository at its head commit deadbeef") {
		t.Errorf("a head the apps repository lacks:\n%s", got)
	}
}

func cloneFiles(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
