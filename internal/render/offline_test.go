package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/build"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
)

// TestOfflineNamesEveryBuiltImage: offline, every app renders, each built
// image named by its content tag, with one warning that they were not
// built; a component whose inputs cannot be read is named at its line.
func TestOfflineNamesEveryBuiltImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{"platform.yaml": "registry: registry.example.com/fleet\n"}
	names := []string{"api", "backend", "worker"}
	for _, n := range names {
		files["apps/shop/"+n+"/app.yaml"] = "name: " + n + "\ncomponents: [{name: main, type: workload, workload_spec: {build_mode: dockerfile, port: 80}}]\n"
		files["apps/shop/"+n+"/Dockerfile"] = "FROM scratch\nRUN make " + n + "\n"
	}
	golden.WriteFiles(t, dir, files)
	res, err := render.Run(t.Context(), render.Options{Source: render.Dir(dir), Images: render.ContentTags{Unpinned: "--offline"}})
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, n := range names {
		tag, err := build.ContentTag(build.Request{Root: dir, Context: "apps/shop/" + n, Platforms: []string{"linux/amd64", "linux/arm64"}, Mode: build.ModeDockerfile})
		if err != nil {
			t.Fatal(err)
		}
		img := "registry.example.com/fleet/shop/" + n + "-main:" + tag
		images = append(images, img)
		dep := string(res.Fleet.Map()[fmt.Sprintf("apps/default/shop/%s/main/deployment-%s-main.yaml", n, n)])
		if !strings.Contains(dep, "image: "+img+"\n") {
			t.Errorf("%s does not run %s:\n%s", n, img, dep)
		}
	}
	want := []string{"3 images are named by their content tags, not built (--offline): " + strings.Join(images, ", ")}
	if d := cmp.Diff(want, res.Warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}

	// A Dockerfile that is missing is an error at the component's build.
	golden.WriteFiles(t, dir, map[string]string{
		"apps/shop/worker/app.yaml": "name: worker\ncomponents:\n  - name: main\n    type: workload\n    workload_spec:\n      build_mode: dockerfile\n      build: {dockerfile: missing.Dockerfile}\n      port: 80\n",
	})
	_, err = render.Run(t.Context(), render.Options{Source: render.Dir(dir), Images: render.ContentTags{Unpinned: "--offline"}})
	if err == nil || !strings.HasPrefix(err.Error(), "apps/shop/worker/app.yaml:7:14: component main: ") {
		t.Errorf("err = %v, want it at apps/shop/worker/app.yaml:7:14", err)
	}
}
