package golden

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// readTree reads every file under dir by slash path relative to it,
// leaving out .git folders.
func readTree(dir string) (map[string][]byte, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
		rel, err := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WriteFiles writes files (contents by slash path) under root, making the
// folders they need: a test's fixture tree.
func WriteFiles[T ~string | ~[]byte](t testing.TB, root string, files map[string]T) {
	t.Helper()
	for p, c := range files {
		WriteFile(t, filepath.Join(root, filepath.FromSlash(p)), c)
	}
}

// TempFiles writes files (contents by slash path) under a new temporary
// folder of the test and returns the folder.
func TempFiles[T ~string | ~[]byte](t testing.TB, files map[string]T) string {
	t.Helper()
	dir := t.TempDir()
	WriteFiles(t, dir, files)
	return dir
}

// WriteFile writes content to the file path (mode 0644), making its
// folder.
func WriteFile[T ~string | ~[]byte](t testing.TB, path string, content T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFiles reads every file under root by slash path, leaving out .git
// folders.
func ReadFiles(t testing.TB, root string) map[string]string {
	t.Helper()
	files := ReadBytes(t, root)
	out := make(map[string]string, len(files))
	for p, b := range files {
		out[p] = string(b)
	}
	return out
}

// ReadBytes is ReadFiles for contents kept as bytes.
func ReadBytes(t testing.TB, root string) map[string][]byte {
	t.Helper()
	out, err := readTree(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// PackChart packs the chart folder dir as `helm package` does: a gzipped
// tar whose entries are below the chart's name, each of mode 0644 and
// time zero, so that the same folder packs to the same bytes.
func PackChart(t testing.TB, dir, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name + "/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
