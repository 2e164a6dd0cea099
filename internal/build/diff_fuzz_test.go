//go:build linux

package build

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fuzzNames are the names fuzzed trees are made of: few, so operations
// meet the same paths often.
var fuzzNames = []string{"a", "b", "c", "d"}

// fuzzPath picks a path of depth 1 to 3 from two bytes.
func fuzzPath(b0, b1 byte) string {
	depth := int(b0%3) + 1
	p := ""
	v := int(b1)
	for range depth {
		p += "/" + fuzzNames[v%len(fuzzNames)]
		v /= len(fuzzNames)
	}
	return p
}

// mutate applies one fuzzed change to the tree at dir, as a RUN might.
// Errors (a parent that is a file, say) leave the tree as it is.
func fuzzMutate(dir string, op, b0, b1, b2 byte) {
	p := filepath.Join(dir, fuzzPath(b0, b1))
	content := []byte(fmt.Sprintf("content %d\n", b2%4))
	switch op % 10 {
	case 0: // write a file, making parents
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, content, 0o644)
	case 1: // rewrite in place, maybe with the same bytes
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			os.WriteFile(p, content, 0o644)
		}
	case 2:
		os.RemoveAll(p)
	case 3:
		os.MkdirAll(p, 0o755)
	case 4:
		os.Chmod(p, fs.FileMode(0o600+uint32(b2%3)*0o11))
	case 5:
		os.Lchown(p, int(b2%3), int(b2%2))
	case 6: // replace with a symbolic link
		os.RemoveAll(p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.Symlink(fuzzNames[b2%4], p)
	case 7: // a directory removed and made again with new entries
		os.RemoveAll(p)
		os.MkdirAll(p, 0o755)
		os.WriteFile(filepath.Join(p, "new"), content, 0o644)
	case 8: // a hard link
		q := filepath.Join(dir, fuzzPath(b2, b1^b2))
		if fi, err := os.Lstat(q); err == nil && fi.Mode().IsRegular() {
			os.RemoveAll(p)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Link(q, p)
		}
	case 9: // empty every directory entry of p's parent
		d := filepath.Dir(p)
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			os.RemoveAll(filepath.Join(d, e.Name()))
		}
	}
}

// walkTree is the reference view of a tree: every path with its type,
// mode, owner, link target and content.
func walkTree(t testing.TB, dir string) map[string]pulledFile {
	t.Helper()
	out := map[string]pulledFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		f := pulledFile{Mode: fi.Mode().String(), Owner: fmt.Sprintf("%d:%d", st.Uid, st.Gid)}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			f.Link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			f.Content = string(b)
		}
		rel, _ := filepath.Rel(dir, p)
		out["/"+filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// indexTree is the merged view of layers by the index COPY --from reads
// (an implementation of whiteouts independent of extract).
func indexTree(t testing.TB, layers ...[]byte) map[string]pulledFile {
	t.Helper()
	x := &fsIndex{entries: map[string]*idxEntry{}}
	sfs := &stageFS{}
	for i, raw := range layers {
		l, err := newMemLayer(raw, "application/vnd.oci.image.layer.v1.tar+gzip")
		if err != nil {
			t.Fatal(err)
		}
		sfs.layers = append(sfs.layers, fsLayer{remote: l})
		if err := x.applyRemote(l, i); err != nil {
			t.Fatal(err)
		}
	}
	sfs.idx = x
	var all []*idxEntry
	for _, e := range x.entries {
		all = append(all, e)
	}
	if err := sfs.load(all); err != nil {
		t.Fatal(err)
	}
	out := map[string]pulledFile{}
	for p, e := range x.entries {
		f := pulledFile{Mode: e.mode.String(), Owner: fmt.Sprintf("%d:%d", e.uid, e.gid), Link: e.link}
		if e.mode.IsRegular() {
			f.Content = string(e.data)
		}
		out[p] = f
	}
	return out
}

// FuzzRunDiff builds a tree, changes it as a RUN would, and checks that
// the layer diffTrees and writeDiff make turns the tree before into the
// tree after, both when unpacked on a copy of the tree before and in the
// layer index.
func FuzzRunDiff(f *testing.F) {
	if os.Geteuid() != 0 {
		f.Skip("needs root to set owners")
	}
	// 18 bytes of base tree (6 paths), then operations of 4 bytes.
	baseTree := []byte{2, 0, 1, 2, 4, 1, 2, 8, 0, 1, 1, 0, 0, 2, 3, 2, 9, 0}
	for _, ops := range [][]byte{
		{2, 2, 4, 0, 1, 2, 0, 1, 5, 2, 8, 1},             // delete, rewrite same, chown
		{9, 2, 0, 0, 7, 1, 1, 3},                         // empty a directory, replace one
		{6, 1, 0, 2, 3, 0, 3, 0, 8, 2, 5, 1, 4, 0, 5, 2}, // link over, mkdir, hard link, chmod
		{0, 2, 36, 1, 2, 1, 2, 0, 0, 1, 2, 3},            // file below a file's place
	} {
		f.Add(append(slices.Clone(baseTree), ops...))
	}
	epoch := time.Unix(1700000000, 0).UTC()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 200 {
			return
		}
		// A base tree made from a layer, as a stage's is.
		var base []*fileEntry
		seen := map[string]bool{}
		for i := 0; i+2 < len(data) && i < 18; i += 3 {
			p := fuzzPath(data[i], data[i+1])
			for _, a := range append(ancestors(p), p) {
				if seen[a] {
					continue
				}
				seen[a] = true
				if a != p || data[i+2]%3 == 0 {
					base = append(base, &fileEntry{path: a, mode: fs.ModeDir | 0o755})
				} else {
					base = append(base, &fileEntry{path: a, mode: 0o644, uid: int(data[i+2] % 2), data: []byte("base " + a)})
				}
			}
		}
		// A file of a directory listed as a file too: keep the first.
		var kept []*fileEntry
		for _, e := range base {
			ok := true
			for _, a := range ancestors(e.path) {
				for _, k := range kept {
					if k.path == a && !k.isDir() {
						ok = false
					}
				}
			}
			if ok {
				kept = append(kept, e)
			}
		}
		baseTar, err := writeTar(kept, epoch)
		if err != nil {
			t.Fatal(err)
		}
		work := t.TempDir()
		a, err := newRootFS(filepath.Join(work, "a"), idMap{}, epoch)
		if err != nil {
			t.Fatal(err)
		}
		defer a.close()
		if err := a.extract(bytes.NewReader(baseTar)); err != nil {
			t.Fatal(err)
		}
		before, err := snapshot(a.dir, idMap{})
		if err != nil {
			t.Fatal(err)
		}
		ops := data[min(len(data), 18):]
		for i := 0; i+3 < len(ops); i += 4 {
			fuzzMutate(a.dir, ops[i], ops[i+1], ops[i+2], ops[i+3])
		}
		after, err := snapshot(a.dir, idMap{})
		if err != nil {
			t.Fatal(err)
		}
		entries, err := diffTrees(before, after, a.sums, a.sumFile)
		if err != nil {
			t.Fatal(err)
		}
		layer, _, err := a.writeDiff(entries, epoch, "application/vnd.oci.image.layer.v1.tar+gzip", filepath.Join(work, "layer.tar.gz"), nil)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := layer.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		diffTar, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		names := tarNames(t, bytes.NewReader(diffTar))
		if !slices.IsSortedFunc(names, func(x, y string) int { return cmpTarName(x, y) }) {
			t.Errorf("layer entries are not sorted: %v", names)
		}
		want := walkTree(t, a.dir)

		// Unpacked on a copy of the tree before.
		b, err := newRootFS(filepath.Join(work, "b"), idMap{}, epoch)
		if err != nil {
			t.Fatal(err)
		}
		defer b.close()
		if err := b.extract(bytes.NewReader(baseTar)); err != nil {
			t.Fatal(err)
		}
		if err := b.extract(bytes.NewReader(diffTar)); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, walkTree(t, b.dir)); d != "" {
			t.Errorf("unpacked layer (-after +unpacked):\n%s\nlayer: %v", d, names)
		}
		// In the index.
		if d := cmp.Diff(want, indexTree(t, baseTar, diffTar)); d != "" {
			t.Errorf("indexed layers (-after +index):\n%s\nlayer: %v", d, names)
		}
	})
}

// cmpTarName orders tar names as writeTar sorts paths (directory names
// without their slash).
func cmpTarName(x, y string) int {
	x, y = path.Clean("/"+x), path.Clean("/"+y)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// TestExtractThroughAbsoluteLinks: a layer's paths below a link to an
// absolute path land where the link leads inside the root filesystem, as
// in the image; whiteouts and hard links too.
func TestExtractThroughAbsoluteLinks(t *testing.T) {
	t.Parallel()
	epoch := time.Unix(1, 0).UTC()
	base, err := writeTar([]*fileEntry{
		{path: "/usr", mode: fs.ModeDir | 0o755},
		{path: "/usr/lib64", mode: fs.ModeDir | 0o755},
		{path: "/usr/lib64/old", mode: 0o644, data: []byte("old")},
		{path: "/lib64", mode: fs.ModeSymlink | 0o777, link: "/usr/lib64"},
		{path: "/up", mode: fs.ModeSymlink | 0o777, link: "../../../../usr"},
	}, epoch)
	if err != nil {
		t.Fatal(err)
	}
	top, err := writeTar([]*fileEntry{
		{path: "/lib64/.wh.old"},
		{path: "/lib64/new", mode: 0o755, data: []byte("new")},
		{path: "/up/escaped", mode: 0o644, data: []byte("inside")},
	}, epoch)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRootFS(filepath.Join(t.TempDir(), "root"), idMap{}, epoch)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, l := range [][]byte{base, top} {
		if err := r.extract(bytes.NewReader(l)); err != nil {
			t.Fatal(err)
		}
	}
	got := walkTree(t, r.dir)
	want := map[string]pulledFile{
		"/usr":           {Mode: "drwxr-xr-x", Owner: "0:0"},
		"/usr/lib64":     {Mode: "drwxr-xr-x", Owner: "0:0"},
		"/usr/lib64/new": {Mode: "-rwxr-xr-x", Owner: "0:0", Content: "new"},
		"/usr/escaped":   {Mode: "-rw-r--r--", Owner: "0:0", Content: "inside"},
		"/lib64":         {Mode: "Lrwxrwxrwx", Owner: "0:0", Link: "/usr/lib64"},
		"/up":            {Mode: "Lrwxrwxrwx", Owner: "0:0", Link: "../../../../usr"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
}
