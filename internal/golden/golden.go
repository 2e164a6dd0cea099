package golden

import (
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/atomicfile"
)

// Update is the -update flag: File and Tree rewrite the golden files with
// what the test produced instead of only comparing.
var Update = flag.Bool("update", false, "rewrite golden files under testdata/")

// File compares got with the golden file path, first rewriting the file
// with got under -update.
func File[T ~string | ~[]byte](t testing.TB, path string, got T) {
	t.Helper()
	if *Update {
		if err := atomicfile.Write(path, []byte(got)); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-golden +got):\n%s", path, d)
	}
}

// Tree compares got (slash paths relative to dir → content) with the
// files of the golden folder dir, first replacing the folder with got
// under -update. It reports each golden file got lacks, each file of got
// the folder lacks and each file that differs.
func Tree(t testing.TB, dir string, got map[string][]byte) {
	t.Helper()
	if *Update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for _, p := range slices.Sorted(maps.Keys(got)) {
			if err := atomicfile.Write(filepath.Join(dir, filepath.FromSlash(p)), got[p]); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := readTree(dir)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[p]; !ok {
			t.Errorf("%s: golden file missing from the output", filepath.Join(dir, p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		w, ok := want[p]
		if !ok {
			t.Errorf("%s: not in the golden folder (run go test -update after a deliberate change)", filepath.Join(dir, p))
			continue
		}
		if d := cmp.Diff(string(w), string(got[p])); d != "" {
			t.Errorf("%s differs (-golden +got):\n%s", filepath.Join(dir, p), d)
		}
	}
}

// readTree reads every file under dir by slash path relative to it.
func readTree(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		out[p] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WriteFiles writes files (contents by slash path) under root, making the
// folders they need: a test's fixture tree.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		dst := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ReadFiles reads every file under root by slash path, leaving out .git
// folders.
func ReadFiles(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
