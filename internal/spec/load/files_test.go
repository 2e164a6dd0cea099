package load_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/spec/load"
	"github.com/fleetwright/fleetwright/internal/spectest"
)

const fromApp = `name: web
components:
  - name: nginx
    type: workload
    workload_spec:
      image: nginx:1.27
      port: 8080
      files:
        - path: /etc/nginx/nginx.conf
          from: %s
`

func fromSpec(from string) string { return strings.Replace(fromApp, "%s", from, 1) }

// A file's from is read, relative to the spec's folder, into its content,
// from a folder and from files given as bytes (a Git tree) alike.
func TestFilesFromAreRead(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"apps/shop/web/app.yaml":          fromSpec("config/nginx.conf"),
		"apps/shop/web/config/nginx.conf": "worker_processes 2;\n",
		"apps/shop/other/app.yaml":        strings.Replace(fromSpec("../shared/x.conf"), "name: web", "name: other", 1),
		"apps/shop/shared/x.conf":         "shared\n",
	}
	root := t.TempDir()
	golden.WriteFiles(t, root, files)
	bytesOf := map[string][]byte{}
	for k, v := range files {
		bytesOf[k] = []byte(v)
	}
	read, err := load.ReadFiles(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apps/shop/web/config/nginx.conf", "apps/shop/shared/x.conf"} {
		if _, ok := read[want]; !ok {
			t.Errorf("ReadFiles left out %s", want)
		}
	}
	for name, load := range map[string]func() (*load.Repo, load.Problems){
		"folder":    func() (*load.Repo, load.Problems) { return spectest.NotPolicy(newLoader(t, "").Load(os.DirFS(root))) },
		"bytes":     func() (*load.Repo, load.Problems) { return spectest.NotPolicy(newLoader(t, "").LoadFiles(bytesOf)) },
		"ReadFiles": func() (*load.Repo, load.Problems) { return spectest.NotPolicy(newLoader(t, "").LoadFiles(read)) },
	} {
		repo, ps := load()
		if len(ps) > 0 {
			t.Fatalf("%s: %v", name, ps)
		}
		got := map[string]string{}
		for _, a := range repo.Apps {
			f := a.Spec.Components[0].WorkloadSpec.Files[0]
			if f.Content == nil {
				t.Fatalf("%s: %s: no content", name, a.Spec.Name)
			}
			got[a.Spec.Name] = *f.Content
		}
		if d := cmp.Diff(map[string]string{"web": "worker_processes 2;\n", "other": "shared\n"}, got); d != "" {
			t.Errorf("%s: content (-want +got):\n%s", name, d)
		}
	}
}

// The content of a from file is part of the app's digest: a change to the
// file alone renders the app again.
func TestFilesFromInDigest(t *testing.T) {
	t.Parallel()
	sum := func(conf string) [32]byte {
		repo, ps := spectest.NotPolicy(newLoader(t, "").LoadFiles(map[string][]byte{
			"apps/shop/web/app.yaml":          []byte(fromSpec("nginx.conf")),
			"apps/shop/web/nginx.conf":        []byte(conf),
			"apps/shop/web/unrelated-file.md": []byte("x"),
		}))
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		s, ok := repo.Apps[0].Doc.Sum()
		if !ok {
			t.Fatal("no digest")
		}
		return s
	}
	if sum("a\n") == sum("b\n") {
		t.Error("the digest does not change with the file's content")
	}
	if sum("a\n") != sum("a\n") {
		t.Error("the digest is not stable")
	}
}

func TestFilesFromRefused(t *testing.T) {
	t.Parallel()
	const at = "apps/shop/web/app.yaml:10:17: components[0].workload_spec.files[0].from: "
	tests := []struct {
		name  string
		from  string
		setup func(t *testing.T, root, outside string)
		want  string
	}{
		{"missing", "nginx.conf", nil, at + "no file apps/shop/web/nginx.conf"},
		{"absolute", "/etc/passwd", nil, at + `"/etc/passwd" must be a path relative to the folder of app.yaml, such as config/nginx.conf`},
		{"leaves the repository", "../../../../x.conf", nil, at + `"../../../../x.conf" leaves the apps repository`},
		{"outside apps", "../../../config/x.conf", func(t *testing.T, root, _ string) {
			write(t, filepath.Join(root, "config/x.conf"), "x")
		}, at + `"../../../config/x.conf" is config/x.conf, outside apps/: render reads config files only from the apps/ tree; keep it beside app.yaml`},
		{"folder", "config", func(t *testing.T, root, _ string) {
			write(t, filepath.Join(root, "apps/shop/web/config/x"), "x")
		}, at + "apps/shop/web/config is a folder; name a file"},
		{"the spec's folder", ".", nil, at + `"." is a folder, not a file`},
		{"too big", "big.conf", func(t *testing.T, root, _ string) {
			write(t, filepath.Join(root, "apps/shop/web/big.conf"), strings.Repeat("x", load.MaxConfigFile+1))
		}, at + "apps/shop/web/big.conf is 1048577 bytes; a config file may have at most 1048576 (a ConfigMap holds 1 MiB)"},
		{"not text", "bin.conf", func(t *testing.T, root, _ string) {
			write(t, filepath.Join(root, "apps/shop/web/bin.conf"), "\xff\xfe")
		}, at + "apps/shop/web/bin.conf is not UTF-8 text; a ConfigMap's data holds text (mount binary files from a Secret or an image)"},
		{"link out of the repository", "nginx.conf", func(t *testing.T, root, outside string) {
			write(t, filepath.Join(outside, "secret.conf"), "x")
			if err := os.Symlink(filepath.Join(outside, "secret.conf"), filepath.Join(root, "apps/shop/web/nginx.conf")); err != nil {
				t.Fatal(err)
			}
		}, at + "apps/shop/web/nginx.conf is a symbolic link to a path outside the repository; copy the file instead"},
		{"credential in the file", "nginx.conf", func(t *testing.T, root, _ string) {
			write(t, filepath.Join(root, "apps/shop/web/nginx.conf"), "proxy_pass https://u:hunter2secret@example.com;\n")
		}, at + "nginx.conf holds a password in a https:// URL (https://u:****@…), which would be written to Git; keep the file's credential in a Secret: mount the Secret as a volume, or take the password from env with $(THAT_VAR) if the program expands it, instead of https://u:$(THAT_VAR)@…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			root, outside := filepath.Join(base, "repo"), filepath.Join(base, "outside")
			write(t, filepath.Join(root, "apps/shop/web/app.yaml"), fromSpec(tt.from))
			if tt.setup != nil {
				tt.setup(t, root, outside)
			}
			_, ps := spectest.NotPolicy(newLoader(t, "").Load(os.DirFS(root)))
			if got := ps.Error(); got != tt.want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// A link to a file inside the repository is read like the file.
func TestFilesFromLinkInside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "apps/shop/web/app.yaml"), fromSpec("nginx.conf"))
	write(t, filepath.Join(root, "apps/shop/shared/nginx.conf"), "inside\n")
	if err := os.Symlink("../shared/nginx.conf", filepath.Join(root, "apps/shop/web/nginx.conf")); err != nil {
		t.Fatal(err)
	}
	repo, ps := spectest.NotPolicy(newLoader(t, "").Load(os.DirFS(root)))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if c := repo.Apps[0].Spec.Components[0].WorkloadSpec.Files[0].Content; c == nil || *c != "inside\n" {
		t.Errorf("content = %v", c)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMemFSLinks(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{"apps/a/real.conf": []byte("x"), "apps/b/app.yaml": []byte("y")}
	if err := fstest.TestFS(load.NewMemFSLinksForTest(files, map[string]string{"apps/a/link.conf": "real.conf", "apps/c": "b"}),
		"apps/a/real.conf", "apps/a/link.conf", "apps/b/app.yaml"); err != nil {
		t.Fatal(err)
	}
	fsys := load.NewMemFSLinksForTest(files, map[string]string{"apps/c": "b", "apps/out": "../../etc/passwd", "apps/loop": "loop"})
	if fi, err := fs.Lstat(fsys, "apps/c"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(apps/c) = %v, %v", fi, err)
	}
	if _, err := fs.ReadFile(fsys, "apps/loop"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a loop opens: %v", err)
	}
	if b, err := fs.ReadFile(fsys, "apps/c/app.yaml"); err != nil || string(b) != "y" {
		t.Errorf("through a folder link: %q, %v", b, err)
	}
	if _, err := fs.ReadFile(fsys, "apps/out"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a link out of the file system opens: %v", err)
	}
}

// In a Git tree as on disk, a config file that is a link inside the
// repository is read through it, and one out of it is refused at the link.
func TestFilesFromLinksInATree(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"apps/shop/web/app.yaml":     []byte(fromSpec("nginx.conf")),
		"apps/shop/shared/base.conf": []byte("inside\n"),
		"apps/shop/out/app.yaml":     []byte(strings.Replace(fromSpec("nginx.conf"), "name: web", "name: out", 1)),
	}
	links := map[string]string{"apps/shop/web/nginx.conf": "../shared/base.conf", "apps/shop/out/nginx.conf": "../../../../secret"}
	repo, ps := spectest.NotPolicy(newLoader(t, "").LoadTree(files, links))
	want := "apps/shop/out/app.yaml:10:17: components[0].workload_spec.files[0].from: apps/shop/out/nginx.conf is a symbolic link to a path outside the repository; copy the file instead"
	if ps.Error() != want {
		t.Errorf("problems:\n%v\nwant:\n%s", ps, want)
	}
	web := repo.App(load.DefaultCluster, "shop", "web")
	if c := web.Spec.Components[0].WorkloadSpec.Files[0].Content; c == nil || *c != "inside\n" {
		t.Errorf("content through the link = %v", c)
	}
}
