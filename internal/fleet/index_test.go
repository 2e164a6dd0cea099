package fleet

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
	writeTree(t, root, map[string]string{"f.yaml": h + "a\n"})
	fi, err := os.Lstat(filepath.Join(root, "f.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := statOf(fi)
	x := &Index{entries: map[string]indexEntry{}}
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
	x := &Index{entries: map[string]indexEntry{}}
	x.record("apps/a/x.yaml", indexEntry{size: 3, mtime: 10, ctime: 11, ino: 12}, []byte("abc"))
	x.record("clusters/c/apps/p-a.yaml", indexEntry{size: 1, mtime: 20, ctime: 21, ino: 22}, []byte("z"))
	before := time.Now().UnixNano()
	if err := x.Save(file); err != nil {
		t.Fatal(err)
	}
	y := LoadIndex(file)
	if len(y.entries) != 2 || y.entries["apps/a/x.yaml"] != x.entries["apps/a/x.yaml"] ||
		y.entries["clusters/c/apps/p-a.yaml"] != x.entries["clusters/c/apps/p-a.yaml"] {
		t.Fatalf("round trip lost entries: %+v", y.entries)
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
	x := &Index{entries: map[string]indexEntry{}}
	x.record("a/b.yaml", indexEntry{size: 1, mtime: 2, ctime: 3, ino: 4}, []byte("x"))
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
		_ = LoadIndex(p)
	})
}
