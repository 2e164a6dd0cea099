package render_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetwright/fleetwright/internal/gitrepo/gittest"
	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/render"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// A config file's from is read from a Git ref as from the folder: the
// committed content, through a link inside the repository, and a change
// to the file alone changes the app's digest.
func TestFilesFromAGitRef(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	gittest.Git(t, top, "init", "-q", "-b", "main")
	root := filepath.Join(top, "specs")
	golden.WriteFiles(t, root, map[string]string{
		"apps/shop/web/app.yaml": "name: web\ncomponents:\n  - name: nginx\n    type: workload\n    workload_spec:\n      image: nginx:1.27\n      port: 8080\n" +
			"      files:\n        - {path: /etc/nginx/nginx.conf, from: config/nginx.conf}\n        - {path: /etc/nginx/mime.types, from: mime.types}\n",
		"apps/shop/web/config/nginx.conf": "worker_processes 1;\n",
		"apps/shop/shared/mime.types":     "types {}\n",
	})
	if err := os.Symlink("../shared/mime.types", filepath.Join(root, "apps/shop/web/mime.types")); err != nil {
		t.Fatal(err)
	}
	commit(t, top)
	g, err := render.OpenGit(root)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	loadApp := func(src render.Source) *load.LoadedApp {
		t.Helper()
		repo, ps, err := render.Load(t.Context(), src)
		if err != nil || ps.HasErrors() {
			t.Fatalf("load: %v %v", err, ps)
		}
		return repo.Apps[0]
	}
	contents := func(a *load.LoadedApp) [2]string {
		f := a.Spec.Components[0].WorkloadSpec.Files
		return [2]string{*f[0].Content, *f[1].Content}
	}
	first := loadApp(g.At("HEAD"))
	if got, want := contents(first), [2]string{"worker_processes 1;\n", "types {}\n"}; got != want {
		t.Errorf("from Git: %q, want %q", got, want)
	}
	if got := contents(loadApp(render.Dir(root))); got != contents(first) {
		t.Errorf("the folder reads %q, Git %q", got, contents(first))
	}
	golden.WriteFiles(t, root, map[string]string{"apps/shop/web/config/nginx.conf": "worker_processes 2;\n"})
	commit(t, top)
	second := loadApp(g.At("HEAD"))
	s1, _ := first.Doc.Sum()
	s2, _ := second.Doc.Sum()
	if s1 == s2 {
		t.Error("a change to the config file alone leaves the app's digest as it was")
	}
}
