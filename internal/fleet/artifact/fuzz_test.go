package artifact_test

import (
	"bytes"
	"testing"

	"github.com/fleetwright/fleetwright/internal/fleet/artifact"
)

// FuzzUnpack feeds Unpack arbitrary layers: it returns files or an error,
// never panics, and what Build packs unpacks to the same files.
func FuzzUnpack(f *testing.F) {
	a, err := artifact.Build("apps/c/p/a/api", folder())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(a.Layer)
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, layer []byte) {
		files, err := artifact.Unpack(bytes.NewReader(layer))
		if err != nil {
			return
		}
		for _, x := range files {
			if x.Name == "" || x.Name[0] == '/' || x.Name == ".." || bytes.HasPrefix([]byte(x.Name), []byte("../")) {
				t.Fatalf("unpacked a name outside the artifact: %q", x.Name)
			}
		}
		// Unpacked files pack again, unless they repeat a name.
		if b, err := artifact.Build("x", files); err == nil {
			again, err := artifact.Unpack(bytes.NewReader(b.Layer))
			if err != nil || len(again) != len(files) {
				t.Fatalf("repacked %d files, unpacked %d (%v)", len(files), len(again), err)
			}
		}
	})
}
