package gitrepo

import (
	"io"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// FuzzParseTree checks that parseTree never panics and agrees with
// go-git's tree decoder on every tree both accept.
func FuzzParseTree(f *testing.F) {
	seed := &object.Tree{Entries: []object.TreeEntry{
		{Name: "a.yaml", Mode: filemode.Regular, Hash: plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")},
		{Name: "apps", Mode: filemode.Dir, Hash: plumbing.NewHash("89abcdef0123456789abcdef0123456789abcdef")},
	}}
	obj := &plumbing.MemoryObject{}
	if err := seed.Encode(obj); err != nil {
		f.Fatal(err)
	}
	rd, _ := obj.Reader()
	body, _ := io.ReadAll(rd)
	f.Add(body)
	f.Add([]byte{})
	f.Add([]byte("100644 x\x00short"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseTree(b)
		if err != nil {
			return
		}
		obj := &plumbing.MemoryObject{}
		obj.SetType(plumbing.TreeObject)
		obj.Write(b)
		var tree object.Tree
		if err := tree.Decode(obj); err != nil {
			return
		}
		if len(tree.Entries) < len(got) {
			t.Fatalf("go-git decoded %d entries, parseTree %d", len(tree.Entries), len(got))
		}
		for _, e := range tree.Entries {
			g, ok := got[e.Name]
			if !ok {
				t.Fatalf("entry %q missing", e.Name)
			}
			if g.Hash != e.Hash {
				t.Fatalf("entry %q: hash %s, go-git %s", e.Name, g.Hash, e.Hash)
			}
		}
	})
}
