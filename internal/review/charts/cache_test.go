package charts

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCacheBound: past its bound the cache drops the archives used least
// recently, never the one just written, and a file whose content does not
// match its digest is dropped, not served.
func TestCacheBound(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	c := &cache{dir: t.TempDir(), max: 25, log: slog.New(slog.DiscardHandler), now: func() time.Time { return now }}
	a, b, d := []byte("aaaaaaaaaa"), []byte("bbbbbbbbbb"), []byte("dddddddddd")
	c.put(sha256Digest(a), a)
	now = now.Add(time.Minute)
	c.put(sha256Digest(b), b)
	now = now.Add(time.Minute)
	if _, ok := c.get(sha256Digest(a)); !ok { // a is used: b is now the oldest
		t.Fatal("a is not cached")
	}
	now = now.Add(time.Minute)
	c.put(sha256Digest(d), d)
	if _, ok := c.get(sha256Digest(b)); ok {
		t.Error("b, the least recently used, is still cached past the bound")
	}
	for _, x := range [][]byte{a, d} {
		if got, ok := c.get(sha256Digest(x)); !ok || string(got) != string(x) {
			t.Errorf("%s: got %q, %v", x, got, ok)
		}
	}
	// A file changed on disk is not served.
	f := c.file(sha256Digest(a))
	if err := os.WriteFile(f, []byte("tampered!!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.get(sha256Digest(a)); ok {
		t.Error("a tampered file was served")
	}
	if _, err := os.Stat(f); !os.IsNotExist(err) {
		t.Errorf("the tampered file is still there: %v", err)
	}
	// Names that are not sha256 digests are never paths.
	for _, bad := range []string{"sha256:../../etc/passwd", "md5:abc", "sha256:" + strings.Repeat("z", 64)} {
		if c.file(bad) != "" {
			t.Errorf("%q names a file", bad)
		}
	}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("a temporary file is left: %s", filepath.Join(c.dir, e.Name()))
		}
	}
}

func TestPickVersion(t *testing.T) {
	t.Parallel()
	vs := []string{"1.0.0", "1.2.0", "2.0.0-rc.1", "1.10.0", "not-a-version"}
	for _, tc := range []struct{ want, got, err string }{
		{"1.2.0", "1.2.0", ""},
		{"", "1.10.0", ""},
		{"1.x", "1.10.0", ""},
		{">=1.0.0 <1.5.0", "1.2.0", ""},
		{"~1.0", "1.0.0", ""},
		{"3.x", "", "no version matches"},
		{"not a constraint", "", "neither a version nor a constraint"},
	} {
		got, err := pickVersion(vs, tc.want)
		if got != tc.got || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("pickVersion(%q) = %q, %v; want %q, %q", tc.want, got, err, tc.got, tc.err)
		}
	}
}
