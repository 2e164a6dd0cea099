package load

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"slices"
	"sync"
)

// Sum returns a SHA-256 digest of the document's value (after template
// expansion) and of the files it names that the loader read (config
// files' from), the same for equal values however they were written: map
// keys are taken in order, and each value is tagged with its type, so that
// "1" and 1, or a list of one map and the map, never share a digest. ok is
// false for a value holding a type that a Document never holds.
func (d *Document) Sum() (sum [sha256.Size]byte, ok bool) {
	b := sumBufs.Get().(*[]byte)
	defer sumBufs.Put(b)
	*b, ok = appendCanonical((*b)[:0], d.Value, 0)
	if !ok {
		return sum, false
	}
	if len(d.inputs) > 0 {
		*b = append(append(*b, tagInputs), d.inputs...)
	}
	return sha256.Sum256(*b), true
}

var sumBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Type tags of the canonical form.
const (
	tagNull byte = iota + 1
	tagFalse
	tagTrue
	tagString
	tagNumber
	tagList
	tagMap
	tagInputs // what follows are the files read: name and content, each with its length
)

// appendCanonical appends an unambiguous encoding of v: a tag, then for
// strings and numbers their length and bytes, for lists and maps their
// length and items (map entries sorted by key).
func appendCanonical(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxDepth {
		return b, false
	}
	switch v := v.(type) {
	case nil:
		return append(b, tagNull), true
	case bool:
		if v {
			return append(b, tagTrue), true
		}
		return append(b, tagFalse), true
	case string:
		return appendString(append(b, tagString), v), true
	case json.Number:
		return appendString(append(b, tagNumber), string(v)), true
	case []any:
		b = binary.AppendUvarint(append(b, tagList), uint64(len(v)))
		for _, x := range v {
			var ok bool
			if b, ok = appendCanonical(b, x, depth+1); !ok {
				return b, false
			}
		}
		return b, true
	case map[string]any:
		b = binary.AppendUvarint(append(b, tagMap), uint64(len(v)))
		var small [16]string
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = appendString(b, k)
			var ok bool
			if b, ok = appendCanonical(b, v[k], depth+1); !ok {
				return b, false
			}
		}
		return b, true
	}
	return b, false
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
