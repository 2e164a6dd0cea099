package load_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/spectest"
)

// TestFileLinksOutOfTheRepository: a file link committed under apps/ that
// leads out of the repository (a host token for a Dockerfile's bind mount
// to read) is refused at the link, hidden or not, dangling or not; links
// that stay inside are fine.
func TestFileLinksOutOfTheRepository(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS("../../../examples")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(repo, "apps/shop/orders")
	links := map[string]string{
		"hf":             "/etc/hostname",
		".netrc":         "/root/.netrc",
		"up":             "../../../../outside-file",
		"dangling":       "/nonexistent/token",
		"inside":         "app.yaml",
		"inside-up":      "../../../platform.yaml",
		"sub/deeper/tok": "/etc/passwd",
	}
	for name, target := range links {
		p := filepath.Join(app, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	l := spectest.Loader(t)
	r, ps := l.Load(os.DirFS(repo))
	var got []string
	for _, p := range ps {
		got = append(got, p.Error())
	}
	want := []string{}
	for _, n := range []string{".netrc", "dangling", "hf", "sub/deeper/tok", "up"} {
		f := "apps/shop/orders/" + n
		want = append(want, f+":1:1: "+f+" is a symbolic link to a path outside the repository; copy the file instead")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if len(r.Apps) != 6 {
		t.Errorf("loaded %d apps, want 6", len(r.Apps))
	}
}
