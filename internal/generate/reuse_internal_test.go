package generate

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestParseBuildID(t *testing.T) {
	t.Parallel()
	id := "abc/def/ghi/jkl"
	note := func(bo binary.AppendByteOrder) []byte {
		var b []byte
		b = bo.AppendUint32(b, 4)
		b = bo.AppendUint32(b, uint32(len(id)))
		b = bo.AppendUint32(b, 4)
		b = append(b, "Go\x00\x00"...)
		return append(b, id...)
	}
	cases := map[string][]byte{
		"ELF note, little-endian": append(append(bytes.Repeat([]byte{0x7f}, 100), note(binary.LittleEndian)...), 0, 0),
		"ELF note, big-endian":    append([]byte("Go\x00\x00 decoy "), note(binary.BigEndian)...),
		"marked string":           []byte("junk\xff Go build ID: \"" + id + "\"\n \xffmore"),
	}
	for name, head := range cases {
		if got := string(parseBuildID(head)); got != id {
			t.Errorf("%s: got %q, want %q", name, got, id)
		}
	}
	for _, head := range [][]byte{nil, []byte("Go\x00\x00"), []byte("\xff Go build ID: \"unterminated")} {
		if got := parseBuildID(head); got != nil {
			t.Errorf("%q: got %q, want nothing", head, got)
		}
	}
	if engineID() == nil {
		t.Error("the test binary has no identity")
	}
}
