package load_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spectest"
)

// A link whose target leaves the repository is refused at the link, and so
// is a linked folder under apps/; a file link that stays inside is read.
func TestSymbolicLinks(t *testing.T) {
	t.Parallel()
	const outsideFile = "%s is a symbolic link to a path outside the repository; copy the file instead"
	const outsideFolder = "%s is a symbolic link to a path outside the repository; copy the folder instead"
	tests := []struct {
		name string
		// setup changes a copy of examples/ at repo; outside is a folder
		// beside it holding a copy too.
		setup    func(t *testing.T, repo, outside string)
		want     []string // the problems' messages, %s being the link
		link     string
		wantApps int // apps loaded; the examples have 6
	}{
		{
			name: "spec file to an absolute path outside",
			link: "apps/shop/orders/app.yaml",
			setup: func(t *testing.T, repo, outside string) {
				relink(t, filepath.Join(outside, "apps/shop/orders/app.yaml"), filepath.Join(repo, "apps/shop/orders/app.yaml"))
			},
			want:     []string{outsideFile},
			wantApps: 5,
		},
		{
			name: "spec file to a relative path outside",
			link: "apps/shop/orders/app.yaml",
			setup: func(t *testing.T, repo, outside string) {
				relink(t, "../../../../outside/apps/shop/orders/app.yaml", filepath.Join(repo, "apps/shop/orders/app.yaml"))
			},
			want:     []string{outsideFile},
			wantApps: 5,
		},
		{
			name: "spec file through a link inside that points outside",
			link: "specs",
			setup: func(t *testing.T, repo, outside string) {
				relink(t, filepath.Join(outside, "apps/shop/orders"), filepath.Join(repo, "specs"))
				relink(t, "../../../specs/app.yaml", filepath.Join(repo, "apps/shop/orders/app.yaml"))
			},
			want:     []string{outsideFolder},
			wantApps: 5,
		},
		{
			name: "spec file inside the repository is read",
			setup: func(t *testing.T, repo, outside string) {
				if err := os.Rename(filepath.Join(repo, "apps/shop/orders/app.yaml"), filepath.Join(repo, "orders.yaml")); err != nil {
					t.Fatal(err)
				}
				relink(t, "../../../orders.yaml", filepath.Join(repo, "apps/shop/orders/app.yaml"))
			},
			wantApps: 6,
		},
		{
			name: "platform file outside",
			link: "platform.yaml",
			setup: func(t *testing.T, repo, outside string) {
				relink(t, filepath.Join(outside, "platform.yaml"), filepath.Join(repo, "platform.yaml"))
			},
			want:     []string{outsideFile},
			wantApps: 6,
		},
		{
			name: "app folder outside",
			link: "apps/shop/orders",
			setup: func(t *testing.T, repo, outside string) {
				if err := os.RemoveAll(filepath.Join(repo, "apps/shop/orders")); err != nil {
					t.Fatal(err)
				}
				relink(t, filepath.Join(outside, "apps/shop/orders"), filepath.Join(repo, "apps/shop/orders"))
			},
			want:     []string{outsideFolder},
			wantApps: 5,
		},
		{
			name: "app folder inside",
			link: "apps/shop/orders",
			setup: func(t *testing.T, repo, outside string) {
				if err := os.Rename(filepath.Join(repo, "apps/shop/orders"), filepath.Join(repo, "orders")); err != nil {
					t.Fatal(err)
				}
				relink(t, "../../orders", filepath.Join(repo, "apps/shop/orders"))
			},
			want:     []string{"%s is a symbolic link to a folder; the specs below it are not read: move or copy the folder here instead"},
			wantApps: 5,
		},
		{
			name: "template folder outside",
			link: "templates/worker",
			setup: func(t *testing.T, repo, outside string) {
				if err := os.RemoveAll(filepath.Join(repo, "templates/worker")); err != nil {
					t.Fatal(err)
				}
				relink(t, filepath.Join(outside, "templates/worker"), filepath.Join(repo, "templates/worker"))
				app := "name: jobs\ntemplate:\n  name: worker\n  parameters:\n    image: myorg/jobs:1.0.0\n"
				if err := os.MkdirAll(filepath.Join(repo, "apps/shop/jobs"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(repo, "apps/shop/jobs/app.yaml"), []byte(app), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want:     []string{outsideFolder},
			wantApps: 7, // jobs stays, with its problem
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			repo, outside := filepath.Join(top, "repo"), filepath.Join(top, "outside")
			for _, d := range []string{repo, outside} {
				if err := os.CopyFS(d, os.DirFS("../../../examples")); err != nil {
					t.Fatal(err)
				}
			}
			tt.setup(t, repo, outside)
			l := spectest.Loader(t)
			r, ps := spectest.NotPolicy(l.Load(os.DirFS(repo)))
			var got []string
			for _, p := range ps {
				if p.File != tt.link || p.Line != 1 || p.Column != 1 {
					t.Errorf("problem not at the link %s:1:1: %v", tt.link, p)
				}
				got = append(got, p.Message)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.Replace(w, "%s", tt.link, 1))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
			if len(r.Apps) != tt.wantApps {
				t.Errorf("loaded %d apps, want %d", len(r.Apps), tt.wantApps)
			}
		})
	}
}

// relink replaces the file at link with a symbolic link to target.
func relink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
