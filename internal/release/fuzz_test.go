package release

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// FuzzReadSums checks that ReadSums never panics, and that what it accepts
// reads back the same once written in sha256sum's format.
func FuzzReadSums(f *testing.F) {
	h := strings.Repeat("0a", 32)
	f.Add(h + "  fleetwright_1.2.3_linux_amd64.tar.gz\n" + h + "  SHA256SUMS\n")
	f.Add(h + "  *binary.tar.gz\n")
	f.Add("")
	f.Add("\n\n")
	f.Add(h + " one-space\n")
	f.Fuzz(func(t *testing.T, in string) {
		sums, err := ReadSums(strings.NewReader(in))
		if err != nil {
			return
		}
		var b strings.Builder
		for _, name := range slices.Sorted(maps.Keys(sums)) {
			fmt.Fprintf(&b, "%s  %s\n", sums[name], name)
		}
		again, err := ReadSums(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("written back %q: %v", b.String(), err)
		}
		if !maps.Equal(sums, again) {
			t.Fatalf("read %v, then %v", sums, again)
		}
	})
}
