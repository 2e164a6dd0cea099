package tenancy

import (
	"encoding/json"
	"fmt"
)

// The bounds on what patches may make of a component's objects. kustomize
// applies JSON 6902 operations without a limit: each copy can double an
// object, so 23 copies of a 2 KB patch ask for gigabytes and kill the
// build (and kustomize-controller) with an out-of-memory error. The Budget
// refuses such patches from their text alone, before kustomize runs them.
const (
	// MaxObjectBytes bounds an object's JSON after the patches: etcd keeps
	// objects of at most 1.5 MiB.
	MaxObjectBytes = 1 << 20
	// MaxPatchBytes bounds the text of one patch.
	MaxPatchBytes = 64 << 10
	// MaxPatches bounds the patches of one component (or folder).
	MaxPatches = 64
	// MaxOperations bounds the JSON 6902 operations of one component's
	// patches together.
	MaxOperations = 256
)

// Budget bounds what a component's patches can make of its objects,
// before kustomize runs them: the size an object can reach (an upper
// bound: every add and replace adds its value, every copy can double the
// object), the number of patches and of operations.
type Budget struct {
	size, patches, ops int
}

// NewBudget starts the bound from the size of the largest object (its
// JSON) the patches may apply to.
func NewBudget(largest int) *Budget { return &Budget{size: largest} }

// Add accounts for one patch, of textLen bytes, decoded (a list of JSON
// 6902 operations, or a strategic merge patch's object). It returns "" or
// why the patch is refused; op is the operation (counted from 1) that
// broke a bound, 0 for the patch as a whole.
func (b *Budget) Add(textLen int, patch any) (op int, msg string) {
	b.patches++
	if b.patches > MaxPatches {
		return 0, fmt.Sprintf("is patch %d of the component; a component may have at most %d", b.patches, MaxPatches)
	}
	if textLen > MaxPatchBytes {
		return 0, fmt.Sprintf("is %d bytes; a patch may be at most %d", textLen, MaxPatchBytes)
	}
	ops, ok := patch.([]any)
	if !ok {
		// A strategic merge patch adds at most its own content.
		v, err := json.Marshal(patch)
		if err != nil {
			return 0, "does not encode as JSON"
		}
		b.size += len(v)
		if b.size > MaxObjectBytes {
			return 0, fmt.Sprintf("could make an object of %d bytes; an object may be at most %d", b.size, MaxObjectBytes)
		}
		return 0, ""
	}
	// Every operation may also add a key and its punctuation.
	const punct = 8
	for i, item := range ops {
		b.ops++
		if b.ops > MaxOperations {
			return i + 1, fmt.Sprintf("is JSON 6902 operation %d of the component; a component's patches may have at most %d", b.ops, MaxOperations)
		}
		m, _ := item.(map[string]any)
		switch op, _ := m["op"].(string); op {
		case "add", "replace":
			v, err := json.Marshal(m["value"])
			if err != nil {
				return i + 1, "has a value that does not encode as JSON"
			}
			p, _ := m["path"].(string)
			b.size += len(v) + len(p) + punct
		case "copy":
			// The copied value is at most the whole object.
			p, _ := m["path"].(string)
			b.size += b.size + len(p) + punct
		case "move":
			// The value may move under a longer key.
			p, _ := m["path"].(string)
			b.size += len(p) + punct
		}
		if b.size > MaxObjectBytes {
			return i + 1, fmt.Sprintf("could grow an object to %s (each copy can double it); an object may be at most %d bytes: "+
				"kustomize would run out of memory applying it", humanBytes(b.size), MaxObjectBytes)
		}
	}
	return 0, ""
}

// Bound is the size (JSON bytes) no object can exceed after the patches
// added so far.
func (b *Budget) Bound() int { return b.size }

func humanBytes(n int) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
