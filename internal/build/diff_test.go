package build

import (
	"errors"
	"io/fs"
	"maps"
	"slices"
	"testing"
)

func TestEntryChanged(t *testing.T) {
	t.Parallel()
	file := snapEntry{mode: 0o644, size: 3, ino: 1, nlink: 1, mtime: 10, ctime: 10}
	rewritten := file
	rewritten.ino, rewritten.mtime, rewritten.ctime = 2, 20, 20
	longer := rewritten
	longer.size = 4
	dir := snapEntry{mode: fs.ModeDir | 0o755, ino: 3, mtime: 10}
	link := snapEntry{mode: fs.ModeSymlink | 0o777, link: "a"}
	with := func(e snapEntry, f func(*snapEntry)) snapEntry { f(&e); return e }
	sum := [32]byte{1}
	errSum := errors.New("read")
	for _, tc := range []struct {
		name    string
		a, b    snapEntry
		sums    map[string][32]byte
		content [32]byte // what sumOf reads now
		want    bool
		wantErr error
		read    bool // sumOf is called
	}{
		{name: "untouched file", a: file, b: file},
		{name: "mode", a: with(file, func(e *snapEntry) { e.mode = 0o600 }), b: file, want: true},
		{name: "owner", a: with(file, func(e *snapEntry) { e.uid = 5 }), b: file, want: true},
		{name: "group", a: with(file, func(e *snapEntry) { e.gid = 5 }), b: file, want: true},
		{name: "type", a: dir, b: file, want: true},
		{name: "folder's times", a: with(dir, func(e *snapEntry) { e.mtime = 99 }), b: dir},
		{name: "rewritten, same content", a: rewritten, b: file, sums: map[string][32]byte{"/f": sum}, content: sum, read: true},
		{name: "rewritten, other content", a: rewritten, b: file, sums: map[string][32]byte{"/f": sum}, content: [32]byte{2}, want: true, read: true},
		{name: "rewritten, sum unknown", a: rewritten, b: file, want: true},
		{name: "rewritten, other size", a: longer, b: file, sums: map[string][32]byte{"/f": sum}, want: true},
		{name: "unreadable", a: rewritten, b: file, sums: map[string][32]byte{"/f": sum}, wantErr: errSum, read: true},
		{name: "link target", a: with(link, func(e *snapEntry) { e.link = "b" }), b: link, want: true},
		{name: "same link", a: link, b: link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			read := false
			got, err := entryChanged("/f", tc.a, tc.b, tc.sums, func(p string) ([32]byte, error) {
				read = true
				if p != "/f" {
					t.Errorf("sumOf(%q)", p)
				}
				return tc.content, tc.wantErr
			})
			if !errors.Is(err, tc.wantErr) || got != tc.want || read != tc.read {
				t.Errorf("entryChanged = %v, %v (read %v); want %v, %v (read %v)", got, err, read, tc.want, tc.wantErr, tc.read)
			}
		})
	}
}

func TestOpaqueDirs(t *testing.T) {
	t.Parallel()
	dir := snapEntry{mode: fs.ModeDir | 0o755}
	file := snapEntry{mode: 0o644}
	before := map[string]snapEntry{
		"/emptied": dir, "/emptied/a": file, "/emptied/b": file,
		"/kept": dir, "/kept/a": file, "/kept/b": file,
		"/one": dir, "/one/a": file,
		"/gone": dir, "/gone/a": file, "/gone/b": file,
		"/nowfile": dir, "/nowfile/a": file, "/nowfile/b": file,
	}
	after := map[string]snapEntry{
		"/emptied": dir,
		"/kept":    dir, "/kept/b": file,
		"/one":     dir,
		"/nowfile": file,
	}
	// A folder that kept none of two or more entries; not one that kept
	// one, had one only, is gone or is no folder now.
	if got, want := slices.Sorted(maps.Keys(opaqueDirs(before, after))), []string{"/emptied"}; !slices.Equal(got, want) {
		t.Errorf("opaqueDirs = %v, want %v", got, want)
	}
	// The root, emptied of its entries, is opaque too.
	root := map[string]snapEntry{"/a": file, "/b": file}
	if got := opaqueDirs(root, map[string]snapEntry{}); !got["/"] || len(got) != 1 {
		t.Errorf("opaqueDirs of an emptied root = %v", got)
	}
	if !underOpaque(map[string]bool{"/emptied": true}, "/emptied/x/y") || underOpaque(map[string]bool{"/emptied": true}, "/emptiedx/y") {
		t.Error("underOpaque")
	}
}
