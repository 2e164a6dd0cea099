package review_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/generate"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/review"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

const seedPlatform = "project_ids: {b2c3d4e5-0002-0000-0000-000000000000: my-project}\n"

func seedFiles(t *testing.T) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile("../../examples/apps/my-project/my-api/app.json")
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"platform.yaml": []byte(seedPlatform), "apps/my-project/my-api/app.json": b}
}

func renderFiles(t *testing.T, files map[string][]byte) (*load.Repo, map[string][]byte) {
	t.Helper()
	return renderOver(t, files, nil)
}

// renderOver renders the apps as render does over the fleet as it is
// (generate.Options.Previous), prev; nil renders a new fleet.
func renderOver(t *testing.T, files, prev map[string][]byte) (*load.Repo, map[string][]byte) {
	t.Helper()
	repo := spectest.LoadFiles(t, files)
	opts := generate.Options{}
	opts.Over(prev)
	f, err := generate.Render(repo, opts)
	if err != nil {
		t.Fatal(err)
	}
	return repo, f.Map()
}

func with(files map[string][]byte, p, old, new string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range files {
		out[k] = v
	}
	out[p] = []byte(strings.Replace(string(files[p]), old, new, 1))
	return out
}

func TestComments(t *testing.T) {
	t.Parallel()
	seed := seedFiles(t)
	const app = "apps/my-project/my-api/app.json"
	tests := []struct {
		name       string
		base, head map[string][]byte
		danger     int
	}{
		{name: "first-deploy", base: map[string][]byte{"platform.yaml": []byte(seedPlatform)}, head: seed, danger: 4},
		{name: "image-bump", base: seed, head: with(seed, app, "myorg/my-api:v1.2.0", "myorg/my-api:v1.3.0@sha256:"+strings.Repeat("ab", 32))},
		{name: "removed-app", base: seed, head: map[string][]byte{"platform.yaml": []byte(seedPlatform)}, danger: 3},
		{name: "export-change", base: seed, head: with(seed, app, `"database": "myapp"`, `"database": "orders"`)},
		{name: "scale", base: seed, head: with(seed, app, `"replicas": 2`, `"replicas": 5`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			baseRepo, base := renderFiles(t, tt.base)
			headRepo, head := renderFiles(t, tt.head)
			c := review.Build(review.Input{Base: base, Head: head, BaseRepo: baseRepo, HeadRepo: headRepo, FullDiffHint: "the full diff is in the job summary"})
			if len(c.Danger) != tt.danger {
				t.Errorf("danger = %q, want %d entries", c.Danger, tt.danger)
			}
			if !strings.HasPrefix(c.Body, review.Marker) {
				t.Error("the comment does not start with the marker")
			}
			golden.File(t, filepath.Join("testdata", tt.name+".md"), c.Body)
		})
	}
}

// TestExportChangeRollsConsumer: changing the database the api reads must
// change the api's pod template (its exports checksum), so it rolls.
func TestExportChangeRollsConsumer(t *testing.T) {
	t.Parallel()
	seed := seedFiles(t)
	_, base := renderFiles(t, seed)
	_, head := renderFiles(t, with(seed, "apps/my-project/my-api/app.json", `"database": "myapp"`, `"database": "orders"`))
	dep := "apps/default/my-project/my-api/api/deployment-my-api-api.yaml"
	sum := func(b []byte) string {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "exports-checksum") {
				return l
			}
		}
		return ""
	}
	if sum(base[dep]) == "" || sum(base[dep]) == sum(head[dep]) {
		t.Errorf("exports checksum did not change: %q vs %q", sum(base[dep]), sum(head[dep]))
	}
}

func TestHugeDiffIsCut(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	for i := range 120 {
		files["apps/p/app"+strings.Repeat("x", 3)+string(rune('a'+i%26))+string(rune('a'+i/26))+"/app.yaml"] = []byte(`name: a` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `
components:
  - {name: web, type: workload, workload_spec: {image: nginx:1.27, port: 80, ingress: {enabled: true}, autoscaling: {max_replicas: 3}}}
  - {name: db, type: addon, addon_spec: {type: postgresql, chart: {repo: https://charts.bitnami.com/bitnami, name: postgresql, version: 13.4.4}}}
`)
	}
	repo, head := renderFiles(t, files)
	c := review.Build(review.Input{Base: map[string][]byte{}, Head: head, HeadRepo: repo, FullDiffHint: "see the job summary"})
	if len(c.Body) > review.GitHubLimit {
		t.Fatalf("body is %d characters", len(c.Body))
	}
	if len(c.Cut) == 0 || !strings.Contains(c.Body, "more file(s) did not fit in this comment; see the job summary") {
		t.Errorf("the cut is not reported (cut %d)", len(c.Cut))
	}
	if len(c.FullDiff) <= len(c.Body) {
		t.Errorf("the full diff (%d) should hold everything", len(c.FullDiff))
	}
}

// loadOnly loads specs without rendering them.
func loadOnly(t *testing.T, files map[string][]byte) (*load.Repo, load.Problems) {
	t.Helper()
	repo, ps := spectest.Loader(t).LoadFiles(files)
	if ps.HasErrors() {
		t.Fatal(ps)
	}
	return repo, ps
}

// TestEmptiedProjectComments: the review of removing a project's last app
// (rendered over the fleet as it is, as render review does) says that the
// project's namespace stays for one render and why; the review of the next
// render says that it goes.
func TestEmptiedProjectComments(t *testing.T) {
	t.Parallel()
	seed := seedFiles(t)
	none := map[string][]byte{"platform.yaml": []byte(seedPlatform)}
	baseRepo, base := renderFiles(t, seed)
	headRepo, emptied := renderOver(t, none, base)
	c := review.Build(review.Input{Base: base, Head: emptied, BaseRepo: baseRepo, HeadRepo: headRepo})
	if want := "**Project `my-project` has no app left** (`clusters/default/projects/my-project.yaml`): its namespace stays"; !strings.Contains(c.Body, want) {
		t.Errorf("the comment lacks %q:\n%s", want, c.Body)
	}
	_, gone := renderOver(t, none, emptied)
	c = review.Build(review.Input{Base: emptied, Head: gone, BaseRepo: headRepo, HeadRepo: headRepo})
	if want := "**Project `my-project` is removed** (`clusters/default/projects/my-project.yaml`): Flux deletes its namespace"; !strings.Contains(c.Body, want) {
		t.Errorf("the comment lacks %q:\n%s", want, c.Body)
	}
}
