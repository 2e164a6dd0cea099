package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
	"github.com/fleetwright/fleetwright/internal/manifest"
)

const h = manifest.Header

func TestComputeAndApply(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{
		"apps/c/p/a/web/same.yaml":         h + "same\n",
		"apps/c/p/a/web/changed.yaml":      h + "old\n",
		"apps/c/p/gone/web/x.yaml":         h + "gone\n",
		"apps/c/p/a/web/handmade.yaml":     "kind: ConfigMap\n",
		"clusters/c/flux-system/gotk.yaml": "not managed\n",
	})
	old := time.Now().Add(-time.Hour)
	same := filepath.Join(root, "apps/c/p/a/web/same.yaml")
	if err := os.Chtimes(same, old, old); err != nil {
		t.Fatal(err)
	}
	desired := map[string][]byte{
		"apps/c/p/a/web/same.yaml":    []byte(h + "same\n"),
		"apps/c/p/a/web/changed.yaml": []byte(h + "new\n"),
		"apps/c/p/b/api/added.yaml":   []byte(h + "added\n"),
	}
	plan, err := Compute(root, desired, []string{"apps/c", "clusters/c/apps"})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range plan.Changes {
		ops = append(ops, string(c.Op)+" "+c.Path)
	}
	want := []string{"update apps/c/p/a/web/changed.yaml", "add apps/c/p/b/api/added.yaml", "delete apps/c/p/gone/web/x.yaml"}
	if d := cmp.Diff(want, ops); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"apps/c/p/a/web/handmade.yaml"}, plan.Unmanaged); d != "" {
		t.Errorf("unmanaged (-want +got):\n%s", d)
	}
	if err := Apply(root, plan); err != nil {
		t.Fatal(err)
	}
	got := golden.ReadFiles(t, root)
	wantTree := map[string]string{
		"apps/c/p/a/web/same.yaml":         h + "same\n",
		"apps/c/p/a/web/changed.yaml":      h + "new\n",
		"apps/c/p/b/api/added.yaml":        h + "added\n",
		"apps/c/p/a/web/handmade.yaml":     "kind: ConfigMap\n",
		"clusters/c/flux-system/gotk.yaml": "not managed\n",
	}
	if d := cmp.Diff(wantTree, got); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(root, "apps/c/p/gone")); !os.IsNotExist(err) {
		t.Errorf("the emptied folder of a removed app is still there: %v", err)
	}
	if st, _ := os.Stat(same); !st.ModTime().Equal(old) {
		t.Error("an unchanged file was rewritten")
	}
	again, err := Compute(root, desired, []string{"apps/c"})
	if err != nil || !again.Empty() {
		t.Fatalf("second plan is not empty: %+v %v", again, err)
	}
}

// TestFailedWriteChangesNothing: when one file cannot be staged, no file
// of the tree changes.
func TestFailedWriteChangesNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{"apps/c/a.yaml": h + "a\n", "apps/c/blocked": "a file where a folder must go"})
	desired := map[string][]byte{
		"apps/c/a.yaml":         []byte(h + "a2\n"),
		"apps/c/blocked/b.yaml": []byte(h + "b\n"),
	}
	plan, err := Compute(root, desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(root, plan); err == nil {
		t.Fatal("expected an error")
	}
	got := golden.ReadFiles(t, root)
	want := map[string]string{"apps/c/a.yaml": h + "a\n", "apps/c/blocked": "a file where a folder must go"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the tree changed (-want +got):\n%s", d)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	d := Diff([]Change{{Path: "a.yaml", Op: Update, Old: []byte("x: 1\ny: 2\n"), New: []byte("x: 1\ny: 3\n")}, {Path: "b.yaml", Op: Add, New: []byte("z\n")}}, "fleet")
	want := "--- fleet/a.yaml\n+++ fleet/a.yaml\n@@ -1,2 +1,2 @@\n x: 1\n-y: 2\n+y: 3\n--- /dev/null\n+++ fleet/b.yaml\n@@ -0,0 +1 @@\n+z\n"
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(d, "+z") {
		t.Error("added file missing")
	}
}
