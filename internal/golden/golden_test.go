package golden_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	r.fatal = true
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}

// run calls f with a recorder, in its own goroutine so that Fatal can end
// it, and returns the recorded failures.
func run(t *testing.T, update bool, f func(tb testing.TB)) (errs []string, fatal bool) {
	t.Helper()
	old := *golden.Update
	*golden.Update = update
	defer func() { *golden.Update = old }()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.errors, r.fatal
}

// TestFiles writes a tree of bytes and reads it back by slash path,
// without what lies under .git.
func TestFiles(t *testing.T) {
	t.Parallel()
	dir := golden.TempFiles(t, map[string][]byte{"a.yaml": []byte("a\n"), "sub/deep/b.yaml": []byte("b\n"), ".git/HEAD": []byte("ref\n")})
	golden.WriteFile(t, filepath.Join(dir, "sub", "c.txt"), "c\n")
	want := map[string]string{"a.yaml": "a\n", "sub/deep/b.yaml": "b\n", "sub/c.txt": "c\n"}
	if d := cmp.Diff(want, golden.ReadFiles(t, dir)); d != "" {
		t.Errorf("files read back (-want +got):\n%s", d)
	}
}

// The tests set -update themselves, so they run one after the other.

func TestFile(t *testing.T) {
	dir := golden.TempFiles(t, map[string]string{"out.txt": "a\nb\n"})
	path := filepath.Join(dir, "out.txt")
	tests := []struct {
		name      string
		path      string
		got       string
		wantErrs  []string // substrings, one per failure
		wantFatal bool
	}{
		{name: "same", path: path, got: "a\nb\n"},
		{name: "different", path: path, got: "a\nc\n", wantErrs: []string{path + " differs (-golden +got):", `"a\nc\n"`}},
		{name: "missing", path: filepath.Join(dir, "none.txt"), got: "x", wantErrs: []string{"run go test -update to create it"}, wantFatal: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, fatal := run(t, false, func(tb testing.TB) { golden.File(tb, tt.path, tt.got) })
			if fatal != tt.wantFatal {
				t.Errorf("fatal = %v, want %v", fatal, tt.wantFatal)
			}
			checkErrs(t, errs, tt.wantErrs)
		})
	}
}

func checkErrs(t *testing.T, errs, want []string) {
	t.Helper()
	if len(want) == 0 {
		if len(errs) != 0 {
			t.Errorf("failures %q, want none", errs)
		}
		return
	}
	all := strings.Join(errs, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("failures %q lack %q", errs, w)
		}
	}
}

func TestFileUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "out.json")
	errs, _ := run(t, true, func(tb testing.TB) { golden.File(tb, path, []byte("{}\n")) })
	checkErrs(t, errs, nil)
	if b, err := os.ReadFile(path); err != nil || string(b) != "{}\n" {
		t.Errorf("golden file = %q, %v", b, err)
	}
	// Without -update, the rewritten file now matches.
	errs, _ = run(t, false, func(tb testing.TB) { golden.File(tb, path, "{}\n") })
	checkErrs(t, errs, nil)
}

func TestTree(t *testing.T) {
	dir := golden.TempFiles(t, map[string]string{"a.yaml": "a\n", "sub/b.yaml": "b\n", "sub/c.yaml": "c\n"})
	got := map[string][]byte{"a.yaml": []byte("a\n"), "sub/b.yaml": []byte("B\n"), "sub/d.yaml": []byte("d\n")}
	errs, fatal := run(t, false, func(tb testing.TB) { golden.Tree(tb, dir, got) })
	if fatal {
		t.Error("fatal failure")
	}
	want := []string{
		filepath.Join(dir, "sub/c.yaml") + ": golden file missing from the output",
		filepath.Join(dir, "sub/b.yaml") + " differs (-golden +got):",
		filepath.Join(dir, "sub/d.yaml") + ": not in the golden folder",
	}
	if len(errs) != len(want) {
		t.Errorf("%d failures, want %d: %q", len(errs), len(want), errs)
	}
	checkErrs(t, errs, want)

	errs, _ = run(t, false, func(tb testing.TB) {
		golden.Tree(tb, dir, map[string][]byte{"a.yaml": []byte("a\n"), "sub/b.yaml": []byte("b\n"), "sub/c.yaml": []byte("c\n")})
	})
	checkErrs(t, errs, nil)

	_, fatal = run(t, false, func(tb testing.TB) { golden.Tree(tb, filepath.Join(dir, "none"), got) })
	if !fatal {
		t.Error("a missing golden folder is not fatal")
	}
}

func TestTreeUpdate(t *testing.T) {
	dir := golden.TempFiles(t, map[string]string{"old.yaml": "old\n", "sub/b.yaml": "b\n"})
	got := map[string][]byte{"a.yaml": []byte("a\n"), "sub/b.yaml": []byte("B\n")}
	errs, _ := run(t, true, func(tb testing.TB) { golden.Tree(tb, dir, got) })
	checkErrs(t, errs, nil)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, rerr := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel)+"="+string(b))
			return rerr
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.yaml=a\n", "sub/b.yaml=B\n"}, files); diff != "" {
		t.Errorf("golden folder after -update (-want +got):\n%s", diff)
	}
}

// TestPackChart packs a chart folder twice to the same bytes, its entries
// below the chart's name.
func TestPackChart(t *testing.T) {
	t.Parallel()
	dir := golden.TempFiles(t, map[string]string{"Chart.yaml": "name: web\n", "templates/svc.yaml": "kind: Service\n"})
	first := golden.PackChart(t, dir, "web")
	if !bytes.Equal(first, golden.PackChart(t, dir, "web")) {
		t.Error("the same folder packs to different bytes")
	}
	gz, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %o %s", hdr.Name, hdr.Mode, body))
	}
	want := []string{"web/Chart.yaml 644 name: web\n", "web/templates/svc.yaml 644 kind: Service\n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
}
