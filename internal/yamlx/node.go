package yamlx

import (
	"strconv"
	"strings"
)

// Node is a parsed YAML value with its position. A mapping keeps its keys
// in document order, as key and value pairs in Kids.
type Node struct {
	Kids      []*Node // mapping: k0, v0, k1, v1, ...; sequence: items
	Str       string  // scalar: the string, or the canonical JSON text of a number or boolean
	Line, Col int32   // 1-based; columns count characters
	Kind      Kind
	Tag       Tag
}

// Kind is what a node holds.
type Kind uint8

const (
	ScalarNode Kind = iota
	MapNode
	SeqNode
)

// Tag is the type of a scalar.
type Tag uint8

const (
	StrTag Tag = iota
	IntTag
	FloatTag
	BoolTag
	NullTag
)

// Doc is one YAML document of a file.
type Doc struct {
	Root *Node // nil for an empty document
	Line int   // line of the document's first content
}

// Get returns the value of key in a mapping, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != MapNode {
		return nil
	}
	for i := 0; i < len(n.Kids); i += 2 {
		if n.Kids[i].Str == key {
			return n.Kids[i+1]
		}
	}
	return nil
}

// Text returns a scalar's string, or "" for anything else.
func (n *Node) Text() string {
	if n == nil || n.Kind != ScalarNode || n.Tag == NullTag {
		return ""
	}
	return n.Str
}

// IsNull reports whether n is missing or a null scalar.
func (n *Node) IsNull() bool { return n == nil || n.Kind == ScalarNode && n.Tag == NullTag }

// Path returns the node at a field path such as
// spec.template.spec.containers[0].image, and the node of its last key (for
// positions of missing or unknown fields). Either may be nil. Keys may hold
// dots (metadata.labels.app.kubernetes.io/name): the longest key that
// starts the rest of the path wins.
func (n *Node) Path(p string) (val, key *Node) {
	val = n
	for p != "" && val != nil {
		if p[0] == '[' {
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, key
			}
			i, err := strconv.Atoi(p[1:end])
			if err != nil || val.Kind != SeqNode || i < 0 || i >= len(val.Kids) {
				return nil, key
			}
			val, key = val.Kids[i], val.Kids[i]
			p = strings.TrimPrefix(p[end+1:], ".")
			continue
		}
		if val.Kind != MapNode {
			return nil, nil
		}
		best := -1
		for i := 0; i < len(val.Kids); i += 2 {
			k := val.Kids[i].Str
			if strings.HasPrefix(p, k) && (len(p) == len(k) || p[len(k)] == '.' || p[len(k)] == '[') &&
				(best < 0 || len(k) > len(val.Kids[best].Str)) {
				best = i
			}
		}
		if best < 0 {
			return nil, nil
		}
		key = val.Kids[best]
		p = strings.TrimPrefix(p[len(key.Str):], ".")
		val = val.Kids[best+1]
	}
	return val, key
}

// Parse reads every document of a YAML file: with the fast reader when the
// file is in its subset, with yaml.v3 otherwise, to the same result.
func Parse(data []byte) ([]Doc, error) {
	if docs, ok := Fast(data); ok {
		return docs, nil
	}
	return Full(data)
}
