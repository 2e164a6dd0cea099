package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fleetwright/fleetwright/internal/docpath"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// Limits that keep hostile input from exhausting memory or time.
const (
	MaxFileSize = 1 << 20 // bytes of one spec file
	maxDepth    = 64      // nesting of maps and lists
	maxNodes    = 200_000 // values after expanding aliases
)

// Pos is a 1-based line and column in a file.
type Pos struct{ Line, Col int }

// Document is a parsed YAML or JSON file: its generic value (maps, lists,
// strings, json.Number, bools, nil) and the position of every field.
type Document struct {
	File  string
	Value any
	// root is yaml.v3's tree of a file outside the plain subset of YAML.
	// Files read by fastParse keep their data, and build the fast reader's
	// tree (see node) only when a position is asked for, which is rare:
	// only files with problems need one.
	root     *yaml.Node
	data     []byte
	nodeOnce sync.Once
	fast     *yamlx.Node
	// pos, when set, holds every position by path; expanded templates use
	// it to point values at the files they came from.
	pos map[string]nodePos
	// comps holds, for a document fastParse read, the positions of each
	// component's workload_spec and of its resources and replicas, taken
	// from the first read: the policy checks warn there on every
	// component that lacks probes or requests, and a warning there should
	// not cost a second read of the file (see node).
	comps []componentPos
	// inputs are the files the document names that the loader read (a
	// config file's from), each as its name and content: part of Sum, so
	// that a change to one changes the app's digest.
	inputs []byte
}

// addInput records a file the document's value names and the loader read.
func (d *Document) addInput(name string, data []byte) {
	d.inputs = appendString(appendString(d.inputs, name), string(data))
}

type nodePos struct{ key, val Pos }

// componentPos are the positions of a component's workload_spec, and of
// that map's resources and replicas (zero when it has none).
type componentPos struct{ spec, resources, replicas nodePos }

func (d *Document) posAt(p Path) (nodePos, bool) {
	if d.pos != nil {
		np, ok := d.pos[pathKey(p)]
		return np, ok
	}
	if d.comps != nil {
		if np := d.componentPos(p); np.val.Line > 0 {
			return np, true
		}
	}
	var k, v interface{ pos() Pos }
	if n := d.node(); n != nil {
		kn, vn := findNode(n, p)
		k, v = nodeOrNil(kn), nodeOrNil(vn)
	} else {
		kn, vn := d.find(p)
		k, v = yamlOrNil(kn), yamlOrNil(vn)
	}
	switch {
	case v == nil:
		return nodePos{}, false
	case k == nil:
		return nodePos{key: v.pos(), val: v.pos()}, true
	}
	return nodePos{key: k.pos(), val: v.pos()}, true
}

type (
	fastNode struct{ *yamlx.Node }
	yamlNode struct{ *yaml.Node }
)

func (n fastNode) pos() Pos { return Pos{int(n.Line), int(n.Col)} }
func (n yamlNode) pos() Pos { return Pos{n.Line, n.Column} }

func nodeOrNil(n *yamlx.Node) interface{ pos() Pos } {
	if n == nil {
		return nil
	}
	return fastNode{n}
}

func yamlOrNil(n *yaml.Node) interface{ pos() Pos } {
	if n == nil {
		return nil
	}
	return yamlNode{n}
}

// Path is a location in a document: map keys and list indexes, written
// as components[1].workload_spec.port.
type Path = docpath.Path

// pathKey is p as a key of the document's table of positions.
func pathKey(p Path) string {
	var b strings.Builder
	for _, s := range p {
		b.WriteByte('/')
		switch s := s.(type) {
		case string:
			b.WriteString(s)
		case int:
			b.WriteString(strconv.Itoa(s))
		default:
			fmt.Fprint(&b, s)
		}
	}
	return b.String()
}

// Pos returns the position of the value at p, or of its nearest ancestor.
// Positions are looked up in the YAML tree only when a problem is reported.
func (d *Document) Pos(p Path) Pos {
	for i := len(p); i >= 0; i-- {
		if np, ok := d.posAt(p[:i]); ok {
			return np.val
		}
	}
	return Pos{1, 1}
}

// KeyPos returns the position of the key of the field at p (its value's
// position for list items).
func (d *Document) KeyPos(p Path) Pos {
	if np, ok := d.posAt(p); ok {
		return np.key
	}
	return d.Pos(p)
}

// Has reports whether the document holds a value at p.
func (d *Document) Has(p Path) bool {
	_, ok := d.posAt(p)
	return ok
}

// findNode returns the key and value nodes at p in the fast reader's tree
// (the key is nil for list items and the root).
func findNode(n *yamlx.Node, p Path) (key, val *yamlx.Node) {
	for _, step := range p {
		switch s := step.(type) {
		case string:
			if n.Kind != yamlx.MapNode {
				return nil, nil
			}
			i := 0
			for i < len(n.Kids) && n.Kids[i].Str != s {
				i += 2
			}
			if i >= len(n.Kids) {
				return nil, nil
			}
			key, n = n.Kids[i], n.Kids[i+1]
		case int:
			if n.Kind != yamlx.SeqNode || s < 0 || s >= len(n.Kids) {
				return nil, nil
			}
			key, n = nil, n.Kids[s]
		default:
			return nil, nil
		}
	}
	return key, n
}

// find returns the key and value nodes at p in yaml.v3's tree (the key is
// nil for list items and the root).
func (d *Document) find(p Path) (key, val *yaml.Node) {
	n := d.root
	if n == nil {
		return nil, nil
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, step := range p {
		n = deref(n)
		switch s := step.(type) {
		case string:
			key, n = lookup(n, s, 0)
			if n == nil {
				return nil, nil
			}
		case int:
			if n.Kind != yaml.SequenceNode || s < 0 || s >= len(n.Content) {
				return nil, nil
			}
			key, n = nil, n.Content[s]
		default:
			return nil, nil
		}
	}
	return key, n
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// lookup finds a key of a mapping, explicit keys first, then merged ones.
func lookup(m *yaml.Node, k string, depth int) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode || depth > 10 {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if kn := m.Content[i]; !yamlx.IsMerge(kn) && kn.Value == k {
			return kn, m.Content[i+1]
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !yamlx.IsMerge(m.Content[i]) {
			continue
		}
		for _, x := range yamlx.MergeSources(m.Content[i+1]) {
			if kn, vn := lookup(x, k, depth+1); vn != nil {
				return kn, vn
			}
		}
	}
	return nil, nil
}

// Parse reads a YAML or JSON document. JSON files (by name) are checked as
// JSON first so JSON syntax errors read as such.
func Parse(file string, data []byte) (*Document, error) {
	if len(data) > MaxFileSize {
		return nil, problem(file, Pos{1, 1}, fmt.Sprintf("file is %d bytes; the limit is %d", len(data), MaxFileSize))
	}
	if strings.HasSuffix(file, ".json") {
		if err := checkJSON(file, data); err != nil {
			return nil, err
		}
		// Tabs are white space in JSON but not in YAML; outside strings they
		// can be replaced without moving any column. Inside strings a raw
		// tab is invalid JSON, which checkJSON has already refused.
		data = bytes.ReplaceAll(data, []byte{'\t'}, []byte{' '})
	}
	r := readers.Get().(*yamlx.Reader)
	var comps []componentPos
	fast, ok := fastParse(func(data []byte) ([]yamlx.Doc, bool) {
		docs, ok := r.Fast(data)
		if ok && len(docs) == 1 && docs[0].Root != nil {
			comps = componentPositions(docs[0].Root) // before the reader reuses the nodes
		}
		return docs, ok
	}, data)
	readers.Put(r)
	if ok {
		return &Document{File: file, Value: fast, data: data, comps: comps}, nil
	}
	root, err := parseTree(file, data)
	if err != nil {
		return nil, err
	}
	d := &Document{File: file, root: root}
	c := converter{doc: d}
	v, err := c.convert(root, nil, Pos{}, 0)
	if err != nil {
		return nil, err
	}
	d.Value = v
	return d, nil
}

// componentPos answers posAt from comps for components[i].workload_spec and
// its resources and replicas; a zero nodePos for any other path.
func (d *Document) componentPos(p Path) nodePos {
	if len(p) < 3 || len(p) > 4 || p[0] != "components" || p[2] != "workload_spec" {
		return nodePos{}
	}
	i, ok := p[1].(int)
	if !ok || i < 0 || i >= len(d.comps) {
		return nodePos{}
	}
	c := &d.comps[i]
	if len(p) == 3 {
		return c.spec
	}
	switch p[3] {
	case "resources":
		return c.resources
	case "replicas":
		return c.replicas
	}
	return nodePos{}
}

// componentPositions reads comps from a document's fast tree.
func componentPositions(root *yamlx.Node) []componentPos {
	_, list := findNode(root, Path{"components"})
	if list == nil || list.Kind != yamlx.SeqNode {
		return nil
	}
	at := func(k, v *yamlx.Node) nodePos {
		if k == nil || v == nil {
			return nodePos{}
		}
		return nodePos{key: fastNode{k}.pos(), val: fastNode{v}.pos()}
	}
	out := make([]componentPos, len(list.Kids))
	for i, c := range list.Kids {
		k, ws := findNode(c, Path{"workload_spec"})
		if ws == nil {
			continue
		}
		out[i].spec = at(k, ws)
		out[i].resources = at(findNode(ws, Path{"resources"}))
		out[i].replicas = at(findNode(ws, Path{"replicas"}))
	}
	return out
}

// readers are the fast readers of Parse, whose nodes live only until they
// are converted.
var readers = sync.Pool{New: func() any { return new(yamlx.Reader) }}

// node returns the fast reader's tree of a document fastParse read,
// reading the file again the first time; nil for other documents.
func (d *Document) node() *yamlx.Node {
	d.nodeOnce.Do(func() {
		if docs, ok := yamlx.Fast(d.data); ok && len(docs) == 1 {
			d.fast = docs[0].Root
		}
	})
	return d.fast
}

// fastMaxDepth is well under maxDepth, so that the converter's depth limit
// is never the general path's alone to find.
const fastMaxDepth = maxDepth / 2

// fastParse reads a document in the plain subset of YAML with yamlx's fast
// reader (read is yamlx.Fast or a Reader's), and gives the same value the
// converter would build from yaml.v3's tree. Anything else (several
// documents, deep nesting, many values) makes it return ok=false, and Parse
// reads the file with yaml.v3, so every error message is the general
// path's. FuzzFastParse checks that whenever it answers, the general path
// agrees.
func fastParse(read func([]byte) ([]yamlx.Doc, bool), data []byte) (any, bool) {
	docs, ok := read(data)
	if !ok || len(docs) != 1 || docs[0].Root == nil {
		return nil, false
	}
	nodes := 0
	return fastValue(docs[0].Root, 0, &nodes)
}

// fastValue converts a node of the fast reader as the converter converts
// yaml.v3's.
func fastValue(n *yamlx.Node, depth int, nodes *int) (any, bool) {
	*nodes++
	if *nodes > maxNodes || depth > fastMaxDepth {
		return nil, false
	}
	switch n.Kind {
	case yamlx.MapNode:
		m := make(map[string]any, len(n.Kids)/2)
		for i := 0; i < len(n.Kids); i += 2 {
			v, ok := fastValue(n.Kids[i+1], depth+1, nodes)
			if !ok {
				return nil, false
			}
			m[n.Kids[i].Str] = v
		}
		return m, true
	case yamlx.SeqNode:
		l := make([]any, len(n.Kids))
		for i, item := range n.Kids {
			v, ok := fastValue(item, depth+1, nodes)
			if !ok {
				return nil, false
			}
			l[i] = v
		}
		return l, true
	}
	switch n.Tag {
	case yamlx.NullTag:
		return nil, true
	case yamlx.BoolTag:
		return n.Str == "true", true
	case yamlx.IntTag:
		return json.Number(n.Str), true
	case yamlx.FloatTag:
		// The converter writes floats as strconv's shortest 'g' form;
		// yamlx keeps JSON's, of the same float.
		f, err := strconv.ParseFloat(n.Str, 64)
		if err != nil {
			return nil, false
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
	}
	return n.Str, true
}

// parseTree parses data with yaml.v3 into one document node.
func parseTree(file string, data []byte) (*yaml.Node, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, problem(file, Pos{1, 1}, "file is empty")
		}
		return nil, yamlProblem(file, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, problem(file, Pos{extra.Line, extra.Column}, "a spec file holds one document; found a second one")
	}
	return &root, nil
}

func checkJSON(file string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		line, col := lineCol(data, int(off))
		return problem(file, Pos{line, col}, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
	}
}

func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	if col < 1 {
		col = 1
	}
	return line, col
}

// yamlProblem turns yaml.v3's "yaml: line N: msg" into a positioned
// problem, at the line where the parser stopped (yamlErrorLine) and its
// first character.
func yamlProblem(file string, data []byte, err error) error {
	line, msg := splitYAMLError(err)
	if line == 0 {
		return problem(file, Pos{1, 1}, "invalid YAML: "+msg)
	}
	col := 1
	if l := yamlErrorLine(data, line, msg); l != line {
		line, col = l, lineStart(data, l)
		if msg == "did not find expected key" {
			msg += "; is this line indented as the keys beside it?"
		}
	}
	return problem(file, Pos{line, col}, "invalid YAML: "+msg)
}

type converter struct {
	doc   *Document
	nodes int
	// record fills doc.pos while converting (expanded templates only; other
	// documents look positions up in their YAML tree when needed).
	record bool
}

func (c *converter) child(p Path, s any) Path {
	if !c.record {
		return nil
	}
	return p.Child(s)
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	return problem(c.doc.File, Pos{n.Line, n.Column}, fmt.Sprintf(format, args...))
}

func (c *converter) convert(n *yaml.Node, p Path, keyPos Pos, depth int) (any, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, c.fail(n, "document is too large: more than %d values (after expanding aliases)", maxNodes)
	}
	if depth > maxDepth {
		return nil, c.fail(n, "document is nested more than %d levels deep", maxDepth)
	}
	if c.record && n.Kind != yaml.AliasNode && n.Kind != yaml.DocumentNode {
		if _, seen := c.doc.pos[pathKey(p)]; !seen {
			c.doc.pos[pathKey(p)] = nodePos{key: keyPos, val: Pos{n.Line, n.Column}}
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, c.fail(n, "file is empty")
		}
		return c.convert(n.Content[0], p, keyPos, depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, "unknown alias")
		}
		if c.record {
			if _, seen := c.doc.pos[pathKey(p)]; !seen {
				c.doc.pos[pathKey(p)] = nodePos{key: keyPos, val: Pos{n.Line, n.Column}}
			}
		}
		return c.convert(n.Alias, p, keyPos, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		if err := c.mapping(n, m, p, depth, map[string]bool{}); err != nil {
			return nil, err
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			v, err := c.convert(item, c.child(p, i), Pos{item.Line, item.Column}, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil, c.fail(n, "unsupported YAML node")
}

func (c *converter) mapping(n *yaml.Node, m map[string]any, p Path, depth int, explicit map[string]bool) error {
	// Explicit keys win over merged ones (<<), as YAML says.
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if yamlx.IsMerge(k) {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return c.fail(k, "a map key must be a plain string")
		}
		key := k.Value
		if explicit[key] {
			return c.fail(k, "duplicate key %q", key)
		}
		explicit[key] = true
		val, err := c.convert(v, c.child(p, key), Pos{k.Line, k.Column}, depth+1)
		if err != nil {
			return err
		}
		m[key] = val
	}
	for _, mv := range merges {
		for _, mm := range yamlx.MergeSources(mv) {
			if mm.Kind != yaml.MappingNode {
				return c.fail(mv, "a merge key (<<) takes a map or a list of maps")
			}
			tmp := map[string]any{}
			if err := c.mapping(mm, tmp, p, depth+1, map[string]bool{}); err != nil {
				return err
			}
			for k, v := range tmp {
				if _, ok := m[k]; !ok {
					m[k] = v
				}
			}
		}
	}
	return nil
}

func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, "invalid boolean %q", n.Value)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			var u uint64
			if err2 := n.Decode(&u); err2 != nil {
				return nil, c.fail(n, "integer %q is out of range", n.Value)
			}
			return json.Number(strconv.FormatUint(u, 10)), nil
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, c.fail(n, "%q is not a finite number", n.Value)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	}
	return nil, c.fail(n, "unsupported YAML tag %s", n.Tag)
}

// allPositions returns every position of the document by path key.
func (d *Document) allPositions() map[string]nodePos {
	out := map[string]nodePos{}
	switch {
	case d.pos != nil:
		for k, v := range d.pos {
			out[k] = v
		}
	case d.node() != nil:
		var walk func(n *yamlx.Node, p Path, key Pos)
		walk = func(n *yamlx.Node, p Path, key Pos) {
			at := fastNode{n}.pos()
			out[pathKey(p)] = nodePos{key: key, val: at}
			for i := 0; i < len(n.Kids); i++ {
				switch n.Kind {
				case yamlx.MapNode:
					walk(n.Kids[i+1], p.Child(n.Kids[i].Str), fastNode{n.Kids[i]}.pos())
					i++
				case yamlx.SeqNode:
					walk(n.Kids[i], p.Child(i), fastNode{n.Kids[i]}.pos())
				}
			}
		}
		walk(d.node(), nil, Pos{})
	case d.root != nil:
		c := converter{doc: &Document{pos: out}, record: true}
		_, _ = c.convert(d.root, nil, Pos{}, 0)
	}
	return out
}
