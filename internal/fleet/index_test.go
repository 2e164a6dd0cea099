package fleet

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// ageIndex makes every entry old enough for the index to vouch for it, as
// if it had been saved long after the files were written.
func ageIndex(x *Index) { x.saved = time.Now().Add(time.Hour).UnixNano() }

func TestIndexTrustsOnlyUntouchedFiles(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "fleet")
	desired := map[string][]byte{
		"apps/a/deployment.yaml": []byte(h + "kind: Deployment\n"),
		"apps/a/service.yaml":    []byte(h + "kind: Service\n"),
	}
	x := LoadIndex(filepath.Join(t.TempDir(), "missing"))
	plan, err := x.Compute(root, desired, []string{"apps"})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Apply(root, plan); err != nil {
		t.Fatal(err)
	}
	if len(x.entries) != 2 {
		t.Fatalf("Apply recorded %d files, want 2", len(x.entries))
	}
	ageIndex(x)
	dep := filepath.Join(root, "apps/a/deployment.yaml")
	fi, err := os.Lstat(dep)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := statOf(fi)
	if !x.unchanged("apps/a/deployment.yaml", st, desired["apps/a/deployment.yaml"]) {
		t.Fatal("the index does not vouch for a file it recorded")
	}
	if x.unchanged("apps/a/deployment.yaml", st, []byte(h+"kind: Deployment2\n")) {
		t.Fatal("the index vouches for content it did not record")
	}

	// A hand edit that keeps the size and puts the modification time back
	// still changes the change time: Compute must read the file.
	if err := os.WriteFile(dep, []byte(h+"kind: Dep1oyment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dep, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	plan, err = x.Compute(root, desired, []string{"apps"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 1 || plan.Changes[0].Path != "apps/a/deployment.yaml" || plan.Changes[0].Op != Update {
		t.Fatalf("a same-size edit with its old mtime went unseen: %+v", plan.Changes)
	}
}

func TestIndexRacyEntriesAreRead(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	golden.WriteFiles(t, root, map[string]string{"f.yaml": h + "a\n"})
	fi, err := os.Lstat(filepath.Join(root, "f.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := statOf(fi)
	x := newIndex()
	x.record("f.yaml", st, []byte(h+"a\n"))
	// Saved in the same instant the file changed: not to be trusted.
	x.saved = st.ctime
	if x.unchanged("f.yaml", st, []byte(h+"a\n")) {
		t.Fatal("a file changed as the index was saved is trusted")
	}
	ageIndex(x)
	if !x.unchanged("f.yaml", st, []byte(h+"a\n")) {
		t.Fatal("an old entry is not trusted")
	}
}

func TestIndexSaveLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "sub", "index")
	x := newIndex()
	x.record("apps/a/x.yaml", indexEntry{size: 3, mtime: 10, ctime: 11, ino: 12}, []byte("abc"))
	x.record("clusters/c/apps/p-a.yaml", indexEntry{size: 1, mtime: 20, ctime: 21, ino: 22}, []byte("z"))
	x.RememberApps(map[string]AppFiles{"c/p/a": {Digest: [32]byte{7}, Paths: []string{"apps/a/x.yaml", "clusters/c/apps/p-a.yaml"}}})
	x.setDirs(map[string]dirRecord{"apps/a": {stat: indexEntry{mtime: 1, ctime: 2, ino: 3}, files: []string{"x.yaml"}, dirs: []string{"sub"}}})
	before := time.Now().UnixNano()
	if err := x.Save(file); err != nil {
		t.Fatal(err)
	}
	y := LoadIndex(file)
	if len(y.entries) != 2 || y.entries["apps/a/x.yaml"] != x.entries["apps/a/x.yaml"] ||
		y.entries["clusters/c/apps/p-a.yaml"] != x.entries["clusters/c/apps/p-a.yaml"] {
		t.Fatalf("round trip lost entries: %+v", y.entries)
	}
	if !reflect.DeepEqual(y.apps, x.apps) || len(y.apps) != 1 {
		t.Fatalf("round trip lost app records: %+v", y.apps)
	}
	if !reflect.DeepEqual(y.dirs, x.dirs) || len(y.dirs) != 1 {
		t.Fatalf("round trip lost folder records: %+v", y.dirs)
	}
	if y.saved < before {
		t.Fatalf("saved time %d is before the save (%d)", y.saved, before)
	}
	// Unchanged: no write.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := y.Save(file); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatal("an unchanged index was written")
	}
	for _, junk := range []string{"", "fleetwright-index 1\n\x01", "not an index", indexMagic + "\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff"} {
		if err := os.WriteFile(file, []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		if z := LoadIndex(file); len(z.entries) != 0 {
			t.Fatalf("corrupt index %q loaded %d entries", junk, len(z.entries))
		}
	}
}

// FuzzLoadIndex: any bytes in the index file load without a panic.
func FuzzLoadIndex(f *testing.F) {
	x := newIndex()
	x.record("a/b.yaml", indexEntry{size: 1, mtime: 2, ctime: 3, ino: 4}, []byte("x"))
	x.RememberApps(map[string]AppFiles{"c/p/a": {Digest: [32]byte{7}, Paths: []string{"a/b.yaml"}}})
	x.setDirs(map[string]dirRecord{"a": {stat: indexEntry{mtime: 1, ctime: 2, ino: 3}, files: []string{"b.yaml"}, dirs: []string{"c"}}})
	file := filepath.Join(f.TempDir(), "index")
	if err := x.Save(file); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(file)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "index")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		x := LoadIndex(p)
		if x.entries == nil || x.apps == nil || x.dirs == nil {
			t.Fatal("a loaded index misses a map")
		}
	})
}

// renderApp writes an app's files into root through Compute and Apply with
// x and records the app, as render does.
func renderApp(t *testing.T, x *Index, root string, digest byte, files map[string][]byte) *Plan {
	t.Helper()
	plan, err := x.Compute(root, files, []string{"apps"})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Apply(root, plan); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	x.RememberApps(map[string]AppFiles{"c/p/a": {Digest: [32]byte{digest}, Paths: paths}})
	return plan
}

func TestInPlaceVouchesOnlyForUntouchedFiles(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "fleet")
	files := map[string][]byte{
		"apps/a/web/deployment.yaml": []byte(h + "kind: Deployment\n"),
		"apps/a/web/service.yaml":    []byte(h + "kind: Service\n"),
	}
	x := newIndex()
	renderApp(t, x, root, 1, files)
	if x.InPlace(root, "c/p/a", [32]byte{1}) {
		t.Fatal("files written just now (racy) are vouched for")
	}
	ageIndex(x)
	if !x.InPlace(root, "c/p/a", [32]byte{1}) {
		t.Fatal("the index does not vouch for an app it recorded")
	}
	if x.InPlace(root, "c/p/a", [32]byte{2}) || x.InPlace(root, "c/p/b", [32]byte{1}) || (*Index)(nil).InPlace(root, "c/p/a", [32]byte{1}) {
		t.Fatal("the index vouches for another digest or app")
	}
	// Kept files count as unchanged and are not deleted by the walk.
	plan, err := x.Compute(root, map[string][]byte{}, []string{"apps"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 0 || plan.Unchanged != 2 {
		t.Fatalf("with the app kept: %d changes, %d unchanged; want 0 and 2", len(plan.Changes), plan.Unchanged)
	}

	dep := filepath.Join(root, "apps/a/web/deployment.yaml")
	// Past the coarsest clock tick a file system stamps times with.
	time.Sleep(time.Duration(racyMargin))
	for name, touch := range map[string]func() error{
		"rewritten with the same bytes": func() error { return os.WriteFile(dep, files["apps/a/web/deployment.yaml"], 0o644) },
		"removed":                       func() error { return os.Remove(dep) },
	} {
		y := LoadIndex("") // a fresh run over the same records
		y.entries, y.apps = x.entries, x.apps
		ageIndex(y)
		if err := touch(); err != nil {
			t.Fatal(err)
		}
		if y.InPlace(root, "c/p/a", [32]byte{1}) {
			t.Fatalf("a file %s is vouched for", name)
		}
	}
}

// RememberApps records an app only when this run saw every one of its
// files in place: after --check finds a difference, the app stays
// unrecorded; apps no longer generated lose their record.
func TestRememberAppsOnlyWhatIsInPlace(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "fleet")
	files := map[string][]byte{"apps/a/web/deployment.yaml": []byte(h + "v1\n")}
	x := newIndex()
	renderApp(t, x, root, 1, files)
	ageIndex(x)

	y := newIndex()
	y.entries, y.saved = x.entries, x.saved
	changed := map[string][]byte{"apps/a/web/deployment.yaml": []byte(h + "v2\n")}
	plan, err := y.Compute(root, changed, []string{"apps"}) // --check: no Apply
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 1 {
		t.Fatalf("%d changes", len(plan.Changes))
	}
	y.RememberApps(map[string]AppFiles{"c/p/a": {Digest: [32]byte{2}, Paths: []string{"apps/a/web/deployment.yaml"}}})
	if _, ok := y.apps["c/p/a"]; ok {
		t.Fatal("an app whose file differs on disk was recorded")
	}

	z := newIndex()
	z.entries, z.apps, z.saved = x.entries, x.apps, x.saved
	z.RememberApps(nil)
	if len(z.apps) != 0 || !z.changed {
		t.Fatal("the record of an app that was neither generated nor kept survived")
	}
}

// countReads counts the folders that walks read while f runs.
func countReads(t *testing.T, f func()) int {
	t.Helper()
	var n atomic.Int64
	readDir = func(name string) ([]os.DirEntry, error) { n.Add(1); return os.ReadDir(name) }
	defer func() { readDir = os.ReadDir }()
	f()
	return int(n.Load())
}

// A folder whose record vouches for its listing is not read, yet every
// change to the tree is still seen: a file dropped into a vouched folder, a
// listed file that is no longer desired, a folder created beside them.
// Not parallel: it swaps readDir.
func TestWalkTrustsOnlyUnchangedFolders(t *testing.T) {
	root := filepath.Join(t.TempDir(), "fleet")
	desired := map[string][]byte{
		"apps/a/web/deployment.yaml": []byte(h + "kind: Deployment\n"),
		"apps/a/web/service.yaml":    []byte(h + "kind: Service\n"),
		"apps/a/db/release.yaml":     []byte(h + "kind: HelmRelease\n"),
	}
	x := newIndex()
	renderApp(t, x, root, 1, desired)
	time.Sleep(2 * time.Duration(racyMargin)) // the folders must be older than the margin to be recorded
	compute := func(want map[string][]byte) *Plan {
		var plan *Plan
		var err error
		plan, err = x.Compute(root, want, []string{"apps"})
		if err != nil {
			t.Fatal(err)
		}
		ageIndex(x)
		return plan
	}
	if n := countReads(t, func() { compute(desired) }); n != 4 {
		t.Fatalf("the first walk read %d folders, want 4 (apps, apps/a, web, db)", n)
	}
	if len(x.dirs) != 4 {
		t.Fatalf("%d folders recorded, want 4", len(x.dirs))
	}
	if n := countReads(t, func() { compute(desired) }); n != 0 {
		t.Fatalf("a walk over recorded folders read %d of them", n)
	}

	// A listed file no longer desired: its folder is read and it is deleted.
	fewer := maps.Clone(desired)
	delete(fewer, "apps/a/web/service.yaml")
	var plan *Plan
	if n := countReads(t, func() { plan = compute(fewer) }); n != 1 {
		t.Fatalf("read %d folders, want 1 (web)", n)
	}
	if len(plan.Changes) != 1 || plan.Changes[0].Op != Delete || plan.Changes[0].Path != "apps/a/web/service.yaml" {
		t.Fatalf("changes %+v, want the service deleted", plan.Changes)
	}

	// A generated file dropped into a recorded folder, and a new folder.
	golden.WriteFiles(t, root, map[string]string{
		"apps/a/db/stray.yaml":    h + "kind: ConfigMap\n",
		"apps/a/cache/stray.yaml": h + "kind: ConfigMap\n",
		"apps/a/cache/notes.txt":  "by hand\n",
	})
	plan = compute(desired)
	var got []string
	for _, c := range plan.Changes {
		got = append(got, string(c.Op)+" "+c.Path)
	}
	want := []string{"delete apps/a/cache/stray.yaml", "delete apps/a/db/stray.yaml"}
	if !slices.Equal(got, want) || !slices.Equal(plan.Unmanaged, []string{"apps/a/cache/notes.txt"}) {
		t.Fatalf("changes %v, unmanaged %v; want %v and apps/a/cache/notes.txt", got, plan.Unmanaged, want)
	}
	if _, ok := x.dirs["apps/a/cache"]; ok {
		t.Fatal("a folder holding a file by hand was recorded: its warning would be lost")
	}
	// The folder of the unmanaged file is read every time, so the warning
	// is repeated.
	plan = compute(desired)
	if !slices.Equal(plan.Unmanaged, []string{"apps/a/cache/notes.txt"}) {
		t.Fatalf("the second walk lost the unmanaged file: %v", plan.Unmanaged)
	}
}

// Folders that changed within the racy margin before the walk are not
// recorded: a change in the same clock tick would go unseen.
func TestWalkDoesNotRecordFreshFolders(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "fleet")
	x := newIndex()
	renderApp(t, x, root, 1, map[string][]byte{"apps/a/web/deployment.yaml": []byte(h + "x\n")})
	if _, err := x.Compute(root, map[string][]byte{"apps/a/web/deployment.yaml": []byte(h + "x\n")}, []string{"apps"}); err != nil {
		t.Fatal(err)
	}
	if len(x.dirs) != 0 {
		t.Fatalf("folders written just now were recorded: %v", slices.Collect(maps.Keys(x.dirs)))
	}
}

// Entries of files that a run neither found nor kept are dropped: the index
// does not grow with files gone from the folder.
func TestRememberAppsForgetsVanishedFiles(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "fleet")
	files := map[string][]byte{
		"apps/a/web/deployment.yaml": []byte(h + "a\n"),
		"apps/b/web/deployment.yaml": []byte(h + "b\n"),
	}
	x := newIndex()
	renderApp(t, x, root, 1, files)
	ageIndex(x)
	// App b is removed from the specs after its folder was deleted by hand.
	if err := os.RemoveAll(filepath.Join(root, "apps/b")); err != nil {
		t.Fatal(err)
	}
	y := newIndex()
	y.entries, y.apps, y.saved = x.entries, x.apps, x.saved
	if _, err := y.Compute(root, map[string][]byte{"apps/a/web/deployment.yaml": files["apps/a/web/deployment.yaml"]}, []string{"apps"}); err != nil {
		t.Fatal(err)
	}
	y.RememberApps(nil)
	if _, ok := y.entries["apps/b/web/deployment.yaml"]; ok || len(y.entries) != 1 {
		t.Fatalf("entries after the run: %v", slices.Collect(maps.Keys(y.entries)))
	}
}
