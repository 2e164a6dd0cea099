package yamlx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds the nodes of one file, for either reader.
const maxNodes = 1 << 20

// Error is a YAML syntax or structure error at a line.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Full reads every document of a YAML file with yaml.v3. It reads what the
// fast reader reads the same way, and everything else too.
func Full(data []byte) ([]Doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []Doc
	var c Converter
	for {
		var yn yaml.Node
		err := dec.Decode(&yn)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return docs, yamlErr(data, err)
		}
		var d Doc
		if yn.Kind == yaml.DocumentNode && len(yn.Content) == 1 {
			root, err := c.convert(yn.Content[0], 0)
			if err != nil {
				return docs, err
			}
			if !root.IsNull() {
				d.Root = root
				d.Line = yn.Content[0].Line
			}
		}
		docs = append(docs, d)
	}
	return docs, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErr turns a yaml.v3 error into an Error. yaml.v3 numbers some errors
// from the line before the problem; the line reported is instead the first
// at which a prefix of the file stops being valid YAML.
func yamlErr(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		msg = m[2]
	}
	return &Error{Line: firstBadLine(data), Col: 1, Msg: msg}
}

func firstBadLine(data []byte) int {
	ends := []int{}
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	valid := func(n int) bool {
		dec := yaml.NewDecoder(bytes.NewReader(data[:ends[n-1]]))
		for {
			var yn yaml.Node
			err := dec.Decode(&yn)
			if errors.Is(err, io.EOF) {
				return true
			}
			if err != nil {
				return false
			}
		}
	}
	lo, hi := 1, len(ends) // the first hi lines fail
	if hi == 0 || valid(hi) {
		return 1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if valid(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return hi
}

// MergeSources returns the maps a merge key's value (<<: v) merges, in
// order: v itself or the items of a list, aliases followed. Items that are
// not maps are returned as they are, for the caller to refuse.
func MergeSources(v *yaml.Node) []*yaml.Node {
	v = deref(v)
	switch v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		out := make([]*yaml.Node, 0, len(v.Content))
		for _, x := range v.Content {
			out = append(out, deref(x))
		}
		return out
	}
	return nil
}

// IsMerge reports whether a map key is the merge key <<.
func IsMerge(k *yaml.Node) bool { return k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" }

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// A Converter turns yaml.v3 nodes (such as kustomize's) into Nodes the way
// Full does, counting every node it makes against one limit.
type Converter struct {
	nodes int
}

// Convert returns n as a Node.
func (c *Converter) Convert(n *yaml.Node) (*Node, error) { return c.convert(n, 0) }

func (c *Converter) convert(yn *yaml.Node, depth int) (*Node, error) {
	c.nodes++
	if c.nodes > maxNodes || depth > 200 {
		return nil, &Error{Line: yn.Line, Col: yn.Column, Msg: "document too large or too deep"}
	}
	n := &Node{Line: int32(yn.Line), Col: int32(yn.Column)}
	switch yn.Kind {
	case yaml.AliasNode:
		if yn.Alias == nil {
			return nil, &Error{Line: yn.Line, Col: yn.Column, Msg: "unknown alias"}
		}
		return c.convert(yn.Alias, depth+1)
	case yaml.MappingNode:
		n.Kind = MapNode
		n.Kids = []*Node{}
		seen := map[string]bool{}
		var merges []*yaml.Node
		for i := 0; i+1 < len(yn.Content); i += 2 {
			k, v := yn.Content[i], yn.Content[i+1]
			if IsMerge(k) {
				merges = append(merges, v)
				continue
			}
			key, err := c.convert(k, depth+1)
			if err != nil {
				return nil, err
			}
			if key.Kind != ScalarNode {
				return nil, &Error{Line: k.Line, Col: k.Column, Msg: "mapping keys must be scalars"}
			}
			key.Tag = StrTag // JSON keys are strings, as sigs.k8s.io/yaml makes them
			if seen[key.Str] {
				return nil, &Error{Line: k.Line, Col: k.Column, Msg: fmt.Sprintf("duplicate key %q", key.Str)}
			}
			seen[key.Str] = true
			val, err := c.convert(v, depth+1)
			if err != nil {
				return nil, err
			}
			n.Kids = append(n.Kids, key, val)
		}
		for _, m := range merges {
			if err := c.merge(n, m, seen, depth); err != nil {
				return nil, err
			}
		}
	case yaml.SequenceNode:
		n.Kind = SeqNode
		n.Kids = make([]*Node, 0, len(yn.Content))
		for _, item := range yn.Content {
			v, err := c.convert(item, depth+1)
			if err != nil {
				return nil, err
			}
			n.Kids = append(n.Kids, v)
		}
	case yaml.ScalarNode:
		if err := scalarValue(yn, n); err != nil {
			return nil, err
		}
	default:
		return nil, &Error{Line: yn.Line, Col: yn.Column, Msg: "unexpected YAML node"}
	}
	return n, nil
}

// merge applies a "<<" merge key: the keys of the merged mappings that the
// mapping does not set itself.
func (c *Converter) merge(n *Node, m *yaml.Node, seen map[string]bool, depth int) error {
	for _, mm := range MergeSources(m) {
		if mm.Kind != yaml.MappingNode {
			m = deref(m)
			return &Error{Line: m.Line, Col: m.Column, Msg: "map merge requires a mapping or a list of mappings"}
		}
		src, err := c.convert(mm, depth+1)
		if err != nil {
			return err
		}
		for i := 0; i < len(src.Kids); i += 2 {
			if !seen[src.Kids[i].Str] {
				seen[src.Kids[i].Str] = true
				n.Kids = append(n.Kids, src.Kids[i], src.Kids[i+1])
			}
		}
	}
	return nil
}

func scalarValue(yn *yaml.Node, n *Node) error {
	n.Kind = ScalarNode
	switch yn.ShortTag() {
	case "!!null":
		n.Tag = NullTag
	case "!!bool":
		var b bool
		if err := yn.Decode(&b); err != nil {
			return &Error{Line: yn.Line, Col: yn.Column, Msg: err.Error()}
		}
		n.Tag, n.Str = BoolTag, strconv.FormatBool(b)
	case "!!int":
		var v any
		if err := yn.Decode(&v); err != nil {
			return &Error{Line: yn.Line, Col: yn.Column, Msg: err.Error()}
		}
		switch v := v.(type) {
		case int:
			n.Tag, n.Str = IntTag, strconv.Itoa(v)
		case int64:
			n.Tag, n.Str = IntTag, strconv.FormatInt(v, 10)
		case uint64:
			n.Tag, n.Str = IntTag, strconv.FormatUint(v, 10)
		case float64:
			n.Tag, n.Str = FloatTag, FormatFloat(v)
		default:
			n.Tag, n.Str = StrTag, yn.Value
		}
	case "!!float":
		var f float64
		if err := yn.Decode(&f); err != nil {
			return &Error{Line: yn.Line, Col: yn.Column, Msg: err.Error()}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return &Error{Line: yn.Line, Col: yn.Column, Msg: fmt.Sprintf("%s cannot be represented in JSON", yn.Value)}
		}
		n.Tag, n.Str = FloatTag, FormatFloat(f)
	case "!!timestamp":
		// sigs.k8s.io/yaml keeps timestamps as the written string.
		n.Str = yn.Value
	default: // !!str, !!binary and unknown tags keep the text
		n.Str = yn.Value
	}
	return nil
}
