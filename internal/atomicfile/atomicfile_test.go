package atomicfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetwright/fleetwright/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		existing fs.FileMode // 0: no file before
		opts     []atomicfile.Option
		wantMode fs.FileMode
	}{
		{name: "new file", wantMode: 0o644},
		{name: "replaces", existing: 0o600, wantMode: 0o644},
		{name: "mode", opts: []atomicfile.Option{atomicfile.Mode(0o600)}, wantMode: 0o600},
		{name: "keep mode of the old file", existing: 0o755, opts: []atomicfile.Option{atomicfile.KeepMode()}, wantMode: 0o755},
		{name: "keep mode without an old file", opts: []atomicfile.Option{atomicfile.KeepMode()}, wantMode: 0o644},
		{name: "no sync", existing: 0o644, opts: []atomicfile.Option{atomicfile.NoSync()}, wantMode: 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			name := filepath.Join(dir, "a", "b", "file.yaml")
			if tt.existing != 0 {
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, []byte("old\n"), tt.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(name, tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := atomicfile.Write(name, []byte("new\n"), tt.opts...); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(name)
			if err != nil || string(b) != "new\n" {
				t.Fatalf("content = %q, %v; want %q", b, err, "new\n")
			}
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tt.wantMode {
				t.Errorf("mode = %v, want %v", got, tt.wantMode)
			}
			assertOnly(t, filepath.Dir(name), "file.yaml")
		})
	}
}

// TestWriteFuncError checks that a failing write leaves the old file and
// no temporary file behind.
func TestWriteFuncError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "index")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.WriteFunc(name, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want %v", err, boom)
	}
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Errorf("content = %q, want the old file", b)
	}
	assertOnly(t, dir, "index")
}

// TestWriteOverDirectory checks that a folder in the way is an error that
// leaves the folder and no temporary file.
func TestWriteOverDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "x")
	if err := os.MkdirAll(filepath.Join(name, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(name, []byte("x")); err == nil {
		t.Fatal("no error writing over a folder")
	}
	if fi, err := os.Stat(filepath.Join(name, "keep")); err != nil || !fi.IsDir() {
		t.Errorf("folder gone: %v", err)
	}
	assertOnly(t, dir, "x")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Errorf("%s holds %q, want only %q", dir, got, names)
		return
	}
	for i := range got {
		if got[i] != names[i] {
			t.Errorf("%s holds %q, want only %q", dir, got, names)
			return
		}
	}
}

// BenchmarkWrite measures one small file replaced atomically, with and
// without the fsync.
func BenchmarkWrite(b *testing.B) {
	data := []byte("kind: Deployment\nmetadata:\n  name: api-web\n")
	for _, bc := range []struct {
		name string
		opts []atomicfile.Option
	}{{"sync", nil}, {"nosync", []atomicfile.Option{atomicfile.NoSync()}}} {
		b.Run(bc.name, func(b *testing.B) {
			name := filepath.Join(b.TempDir(), "deployment.yaml")
			for b.Loop() {
				if err := atomicfile.Write(name, data, bc.opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
