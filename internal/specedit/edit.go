package specedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// ErrNotFound is returned (wrapped) when a path names nothing.
var ErrNotFound = errors.New("not found")

// Doc is a YAML or JSON file opened for editing.
type Doc struct {
	name  string
	json  bool
	src   []byte
	root  *yaml.Node // the top value (below the document node)
	lines []int      // byte offset where each line starts
	step  int        // indentation step of nested block maps, found once
}

// Parse reads a YAML file, or a JSON file when name ends in .json. The
// file must hold one document whose top value is a map.
func Parse(name string, data []byte) (*Doc, error) {
	d := &Doc{name: name, json: strings.HasSuffix(name, ".json")}
	if err := d.load(bytes.Clone(data)); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Doc) load(src []byte) error {
	parse := src
	if d.json {
		if !json.Valid(src) {
			return fmt.Errorf("%s: invalid JSON", d.name)
		}
		// Tabs are white space in JSON but not in YAML; replacing them keeps
		// every column and byte offset.
		parse = bytes.ReplaceAll(src, []byte{'\t'}, []byte{' '})
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(parse))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: file is empty", d.name)
		}
		return fmt.Errorf("%s: %w", d.name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return fmt.Errorf("%s: holds more than one document", d.name)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s: the top value must be a map", d.name)
	}
	d.src, d.root = src, doc.Content[0]
	d.lines = d.lines[:0]
	d.lines = append(d.lines, 0)
	for i, c := range src {
		if c == '\n' {
			d.lines = append(d.lines, i+1)
		}
	}
	return nil
}

// Name returns the file name given to Parse.
func (d *Doc) Name() string { return d.name }

// IsJSON reports whether the file is JSON.
func (d *Doc) IsJSON() bool { return d.json }

// Bytes returns the file's current content.
func (d *Doc) Bytes() []byte { return bytes.Clone(d.src) }

// Root returns the top map. Its nodes are valid until the next edit.
func (d *Doc) Root() *yaml.Node { return d.root }

// loc is one step of a walk: a node and where it sits.
type loc struct {
	parent *yaml.Node // the map or list holding node; nil for the root
	index  int        // the pair index in a map, the item index in a list
	node   *yaml.Node
	path   Path // resolved: ByName replaced by indexes
	flow   bool // node is inside a flow collection (or JSON)
	indent int  // indentation of the block node holds: more-indented lines continue its value
}

// walk follows p. It returns the locations of the root and every segment
// found; missing is the index of the first segment whose map key does not
// exist, or -1 when all were found.
func (d *Doc) walk(p Path) (chain []loc, missing int, err error) {
	chain = []loc{{node: d.root, flow: d.json || d.root.Style&yaml.FlowStyle != 0, indent: -1}}
	for i, seg := range p {
		cur := chain[len(chain)-1]
		n := cur.node
		if n.Kind == yaml.AliasNode {
			return chain, -1, fmt.Errorf("%s: %s is an alias (*%s); edit the anchored value by hand", d.name, cur.path, n.Value)
		}
		if n.Anchor != "" && i > 0 {
			return chain, -1, fmt.Errorf("%s: %s is anchored (&%s) and shared; edit it by hand", d.name, cur.path, n.Anchor)
		}
		flow := cur.flow || n.Style&yaml.FlowStyle != 0
		switch n.Kind {
		case yaml.MappingNode:
			key, ok := seg.(string)
			if !ok {
				return chain, -1, fmt.Errorf("%s: %s is a map; %v is not a key", d.name, cur.path, seg)
			}
			idx := -1
			for j := 0; j+1 < len(n.Content); j += 2 {
				k := n.Content[j]
				if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
					return chain, -1, fmt.Errorf("%s: %s uses a merge key (<<); edit it by hand", d.name, cur.path)
				}
				if k.Kind == yaml.ScalarNode && k.Value == key {
					idx = j / 2
				}
			}
			if idx < 0 {
				return chain, i, nil
			}
			k := n.Content[2*idx]
			chain = append(chain, loc{parent: n, index: idx, node: n.Content[2*idx+1], path: cur.path.Child(key), flow: flow, indent: k.Column - 1})
		case yaml.SequenceNode:
			idx := -1
			switch s := seg.(type) {
			case int:
				idx = s
			case ByName:
				for j, item := range n.Content {
					if item.Kind != yaml.MappingNode {
						continue
					}
					for m := 0; m+1 < len(item.Content); m += 2 {
						if item.Content[m].Value == "name" && item.Content[m+1].Kind == yaml.ScalarNode && item.Content[m+1].Value == string(s) {
							idx = j
						}
					}
				}
				if idx < 0 {
					return chain, -1, fmt.Errorf("%s: %w: no item named %q in %s", d.name, ErrNotFound, string(s), cur.path)
				}
			default:
				return chain, -1, fmt.Errorf("%s: %s is a list; %v is not an index", d.name, cur.path, seg)
			}
			if idx < 0 || idx >= len(n.Content) {
				return chain, -1, fmt.Errorf("%s: %w: %s has %d items, no [%d]", d.name, ErrNotFound, cur.path, len(n.Content), idx)
			}
			chain = append(chain, loc{parent: n, index: idx, node: n.Content[idx], path: cur.path.Child(idx), flow: flow, indent: n.Column - 1})
		default:
			if isNull(n) {
				return chain, i, nil
			}
			return chain, -1, fmt.Errorf("%s: %s is a value, not a map or a list", d.name, cur.path)
		}
	}
	return chain, -1, nil
}

func (d *Doc) find(p Path) (loc, error) {
	chain, missing, err := d.walk(p)
	if err != nil {
		return loc{}, err
	}
	if missing >= 0 {
		return loc{}, fmt.Errorf("%s: %w: %s", d.name, ErrNotFound, p[:missing+1])
	}
	return chain[len(chain)-1], nil
}

// Resolve returns p with every ByName replaced by its list index.
func (d *Doc) Resolve(p Path) (Path, error) {
	l, err := d.find(p)
	if err != nil {
		return nil, err
	}
	return l.path, nil
}

// Lookup returns the node at p; the error wraps ErrNotFound when p names
// nothing. The node is valid until the next edit.
func (d *Doc) Lookup(p Path) (*yaml.Node, error) {
	l, err := d.find(p)
	if err != nil {
		return nil, err
	}
	return l.node, nil
}

// Has reports whether p names a value.
func (d *Doc) Has(p Path) bool {
	_, err := d.find(p)
	return err == nil
}

// Value returns the value at p decoded into Go values (maps, lists,
// strings, ints, floats, bools, nil).
func (d *Doc) Value(p Path) (any, error) {
	n, err := d.Lookup(p)
	if err != nil {
		return nil, err
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", d.name, p, err)
	}
	return v, nil
}

// Span returns the byte range of the text of the value at p.
func (d *Doc) Span(p Path) (start, end int, err error) {
	l, err := d.find(p)
	if err != nil {
		return 0, 0, err
	}
	start, end = d.span(l.node, l.flow, l.indent)
	return start, end, nil
}

// EntrySpan returns the byte range of the lines of the map entry at p:
// from the start of its key's line to the end of its value's last line,
// with a trailing comment and the line break. The key must begin its line.
func (d *Doc) EntrySpan(p Path) (start, end int, err error) {
	l, err := d.find(p)
	if err != nil {
		return 0, 0, err
	}
	if l.parent == nil || l.parent.Kind != yaml.MappingNode {
		return 0, 0, fmt.Errorf("%s: %s is not a map entry", d.name, p)
	}
	k := l.parent.Content[2*l.index]
	ks := d.nodeStart(k)
	ls := d.lines[k.Line-1]
	if strings.TrimSpace(string(d.src[ls:ks])) != "" {
		return 0, 0, fmt.Errorf("%s: %s does not begin its line", d.name, p)
	}
	return ls, d.lineAfter(d.entryEnd(l.parent, l.index, l.flow, k.Column-1)), nil
}

// Set makes the value at p equal v (a string, bool, integer, float or
// json.Number), changing only that value's text. Missing map keys are
// created: in a block map as new lines after the first of the keys named
// in after that exists (else after the last key), in a flow map or a JSON
// object as a new member. It reports whether the file changed.
func (d *Doc) Set(p Path, v any, after ...string) (bool, error) {
	old, oldRoot, oldLines := d.src, d.root, append([]int(nil), d.lines...)
	changed, err := d.set(p, v, after)
	if err != nil || !changed {
		return false, err
	}
	// Check that the file now reads as intended; odd syntax (explicit
	// keys, unusual indentation) could make a textual edit land elsewhere.
	if n, err := d.Lookup(p); err != nil || !sameScalar(n, v) {
		d.src, d.root, d.lines = old, oldRoot, oldLines
		return false, fmt.Errorf("%s: %s could not be set safely; edit it by hand", d.name, p)
	}
	return true, nil
}

func (d *Doc) set(p Path, v any, after []string) (bool, error) {
	if len(p) == 0 {
		return false, fmt.Errorf("%s: empty path", d.name)
	}
	if _, err := canon(v); err != nil {
		return false, err
	}
	if s, ok := v.(string); ok && !utf8.ValidString(s) {
		return false, fmt.Errorf("%s: %s: the value is not valid UTF-8", d.name, p)
	}
	for _, seg := range p {
		if s, ok := seg.(string); ok && !utf8.ValidString(s) {
			return false, fmt.Errorf("%s: %s: a key is not valid UTF-8", d.name, p)
		}
	}
	chain, missing, err := d.walk(p)
	if err != nil {
		return false, err
	}
	last := chain[len(chain)-1]
	if missing < 0 {
		n := last.node
		if n.Kind != yaml.ScalarNode {
			return false, fmt.Errorf("%s: %s is a %s, not a single value", d.name, last.path, kindName(n))
		}
		if n.Anchor != "" {
			return false, fmt.Errorf("%s: %s is anchored (&%s) and shared; edit it by hand", d.name, last.path, n.Anchor)
		}
		if sameScalar(n, v) {
			return false, nil
		}
		text, err := d.formatScalar(v, last.flow, n)
		if err != nil {
			return false, err
		}
		s, e := d.span(n, last.flow, last.indent)
		return true, d.replace(s, e, text)
	}
	rest := make([]string, 0, len(p)-missing)
	for _, seg := range p[missing:] {
		key, ok := seg.(string)
		if !ok {
			return false, fmt.Errorf("%s: %w: %s (list items are not created)", d.name, ErrNotFound, p[:missing+1])
		}
		rest = append(rest, key)
	}
	if last.node.Kind != yaml.MappingNode {
		return false, fmt.Errorf("%s: %s is empty; fill it in by hand", d.name, last.path)
	}
	if last.node.Anchor != "" && len(chain) > 1 {
		return false, fmt.Errorf("%s: %s is anchored (&%s) and shared; edit it by hand", d.name, last.path, last.node.Anchor)
	}
	return true, d.insert(last, rest, v, after)
}

// Delete removes the map entry at p with its line (in a block map) or its
// member text (in a flow map or JSON object). It reports whether the file
// changed: deleting a missing key changes nothing.
func (d *Doc) Delete(p Path) (bool, error) {
	if len(p) == 0 {
		return false, fmt.Errorf("%s: empty path", d.name)
	}
	chain, missing, err := d.walk(p)
	if err != nil {
		return false, err
	}
	if missing >= 0 {
		return false, nil
	}
	l := chain[len(chain)-1]
	m := l.parent
	if m.Kind != yaml.MappingNode {
		return false, fmt.Errorf("%s: %s is a list item; only map entries are deleted", d.name, l.path)
	}
	n := len(m.Content) / 2
	idx := l.index
	if d.json || l.flow || m.Style&yaml.FlowStyle != 0 {
		switch {
		case n == 1:
			s, e := d.span(m, true, 0)
			return true, d.replace(s, e, "{}")
		case idx < n-1:
			return true, d.replace(d.nodeStart(m.Content[2*idx]), d.nodeStart(m.Content[2*idx+2]), "")
		default:
			return true, d.replace(d.entryEnd(m, idx-1, true, 0), d.entryEnd(m, idx, true, 0), "")
		}
	}
	if n == 1 {
		return false, fmt.Errorf("%s: %s is the only key of its map; edit it by hand", d.name, l.path)
	}
	k := m.Content[2*idx]
	ls := d.lines[k.Line-1]
	if strings.TrimSpace(string(d.src[ls:d.nodeStart(k)])) != "" {
		return false, fmt.Errorf("%s: %s shares its line with other text; edit it by hand", d.name, l.path)
	}
	return true, d.replace(ls, d.lineAfter(d.entryEnd(m, idx, false, k.Column-1)), "")
}

// ReplaceSpans returns the file's bytes with each span replaced by its text.
// Spans must not overlap.
func (d *Doc) ReplaceSpans(spans []Replacement) ([]byte, error) {
	return replaceAll(d.src, spans)
}

// Replacement is text for the byte range [Start, End).
type Replacement struct {
	Start, End int
	Text       string
}

func replaceAll(src []byte, spans []Replacement) ([]byte, error) {
	sorted := append([]Replacement(nil), spans...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].Start < sorted[j-1].Start; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var out bytes.Buffer
	prev := 0
	for _, r := range sorted {
		if r.Start < prev || r.End < r.Start || r.End > len(src) {
			return nil, fmt.Errorf("overlapping or invalid spans")
		}
		out.Write(src[prev:r.Start])
		out.WriteString(r.Text)
		prev = r.End
	}
	out.Write(src[prev:])
	return out.Bytes(), nil
}

// replace swaps src[s:e] for text and parses the result again; on failure
// the document is left as it was.
func (d *Doc) replace(s, e int, text string) error {
	next := make([]byte, 0, len(d.src)-(e-s)+len(text))
	next = append(next, d.src[:s]...)
	next = append(next, text...)
	next = append(next, d.src[e:]...)
	old, oldRoot, oldLines := d.src, d.root, append([]int(nil), d.lines...)
	if err := d.load(next); err != nil {
		d.src, d.root, d.lines = old, oldRoot, oldLines
		return fmt.Errorf("the edit would make the file invalid (%w); edit it by hand", err)
	}
	return nil
}

func (d *Doc) insert(l loc, rest []string, v any, after []string) error {
	m := l.node
	n := len(m.Content) / 2
	anchor := n - 1
	for _, a := range after {
		if i := keyIndex(m, a); i >= 0 {
			anchor = i
			break
		}
	}
	flow := d.json || l.flow || m.Style&yaml.FlowStyle != 0
	if flow {
		entry, err := d.flowEntry(rest, v)
		if err != nil {
			return err
		}
		s, e := d.span(m, true, 0)
		if n == 0 {
			return d.replace(s, e, "{"+entry+"}")
		}
		k := m.Content[2*anchor]
		at := d.entryEnd(m, anchor, true, 0)
		nextLine := d.lineOf(e - 1)
		if anchor+1 < n {
			nextLine = m.Content[2*anchor+2].Line
		}
		if nextLine != d.lineOf(at) {
			ls := d.lines[k.Line-1]
			indent := string(d.src[ls:d.nodeStart(k)])
			if strings.TrimSpace(indent) != "" {
				indent = strings.Repeat(" ", utf8.RuneCount(d.src[ls:d.nodeStart(k)]))
			}
			return d.replace(at, at, ",\n"+indent+entry)
		}
		return d.replace(at, at, ", "+entry)
	}
	k := m.Content[2*anchor]
	at := d.lineAfter(d.entryEnd(m, anchor, false, k.Column-1))
	text, err := d.blockEntry(k.Column-1, rest, v)
	if err != nil {
		return err
	}
	if at == len(d.src) && len(d.src) > 0 && d.src[len(d.src)-1] != '\n' {
		text = "\n" + strings.TrimSuffix(text, "\n")
	}
	return d.replace(at, at, text)
}

func (d *Doc) blockEntry(indent int, rest []string, v any) (string, error) {
	step := d.indentStep()
	var b strings.Builder
	for i, k := range rest {
		b.WriteString(strings.Repeat(" ", indent+i*step))
		b.WriteString(formatKey(k, false, false))
		b.WriteByte(':')
		if i < len(rest)-1 {
			b.WriteByte('\n')
			continue
		}
		text, err := d.formatScalar(v, false, nil)
		if err != nil {
			return "", err
		}
		b.WriteString(" " + text + "\n")
	}
	return b.String(), nil
}

func (d *Doc) flowEntry(rest []string, v any) (string, error) {
	text, err := d.formatScalar(v, true, nil)
	if err != nil {
		return "", err
	}
	for i := len(rest) - 1; i >= 0; i-- {
		entry := formatKey(rest[i], d.json, true) + ": " + text
		if i == 0 {
			return entry, nil
		}
		text = "{" + entry + "}"
	}
	return text, nil
}

// indentStep is the indentation of nested block maps in this file (2 when
// none is nested).
func (d *Doc) indentStep() int {
	if d.step > 0 {
		return d.step
	}
	d.step = 2
	var visit func(n *yaml.Node) bool
	visit = func(n *yaml.Node) bool {
		if n.Style&yaml.FlowStyle != 0 {
			return false
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Content[0].Column > k.Column {
					d.step = v.Content[0].Column - k.Column
					return true
				}
				if visit(v) {
					return true
				}
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if visit(c) {
					return true
				}
			}
		}
		return false
	}
	visit(d.root)
	return d.step
}

func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i / 2
		}
	}
	return -1
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// implicitNull is a null written as nothing ("key:").
func implicitNull(n *yaml.Node) bool {
	return isNull(n) && n.Value == "" && n.Style == 0
}

// sameScalar reports whether node n already holds v.
func sameScalar(n *yaml.Node, v any) bool {
	var cur any
	if err := n.Decode(&cur); err != nil {
		return false
	}
	a, err1 := canon(cur)
	b, err2 := canon(v)
	return err1 == nil && err2 == nil && a == b
}

// canon gives a comparable form of a scalar value.
func canon(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return "b:" + strconv.FormatBool(v), nil
	case string:
		return "s:" + v, nil
	case int:
		return "n:" + strconv.FormatInt(int64(v), 10), nil
	case int32:
		return "n:" + strconv.FormatInt(int64(v), 10), nil
	case int64:
		return "n:" + strconv.FormatInt(v, 10), nil
	case uint64:
		return "n:" + strconv.FormatUint(v, 10), nil
	case float64:
		return numCanon(strconv.FormatFloat(v, 'g', -1, 64))
	case json.Number:
		return numCanon(string(v))
	}
	return "", fmt.Errorf("cannot write a %T as a spec value", v)
}

func numCanon(s string) (string, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", fmt.Errorf("%q is not a number", s)
	}
	return "n:" + r.RatString(), nil
}

// formatScalar writes v as YAML or JSON text; a string keeps the quoting
// style of old when old is a quoted string.
func (d *Doc) formatScalar(v any, flow bool, old *yaml.Node) (string, error) {
	switch v := v.(type) {
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(v), nil
	case int:
		return strconv.Itoa(v), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case json.Number:
		if _, err := numCanon(string(v)); err != nil {
			return "", err
		}
		return string(v), nil
	case string:
		if d.json {
			return jsonString(v), nil
		}
		if old != nil && old.Style&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(v, "\n") {
			return "'" + strings.ReplaceAll(v, "'", "''") + "'", nil
		}
		if old != nil && old.Style&yaml.DoubleQuotedStyle != 0 {
			return jsonString(v), nil
		}
		if plainString(v, flow) {
			return v, nil
		}
		return jsonString(v), nil
	}
	return "", fmt.Errorf("cannot write a %T as a spec value", v)
}

func formatKey(k string, asJSON, flow bool) string {
	if asJSON || !plainString(k, flow) {
		return jsonString(k)
	}
	return k
}

// jsonString is a JSON string, which is also a YAML double-quoted scalar.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// plainString reports whether s can be written unquoted and still read
// back as the same string.
func plainString(s string, flow bool) bool {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\n\r\t") {
		return false
	}
	if strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`", rune(s[0])) {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	if flow && strings.ContainsAny(s, ",[]{}") {
		return false
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("v: "+s), &n); err != nil {
		return false
	}
	if len(n.Content) != 1 || len(n.Content[0].Content) != 2 {
		return false
	}
	val := n.Content[0].Content[1]
	return val.Kind == yaml.ScalarNode && val.ShortTag() == "!!str" && val.Value == s
}

// InFlow reports whether the value at p is written inside a flow
// collection ({…} or […]) or a JSON file, where a plain string may not hold
// flow indicators.
func (d *Doc) InFlow(p Path) (bool, error) {
	l, err := d.find(p)
	if err != nil {
		return false, err
	}
	return l.flow || d.json, nil
}

// YAMLString writes s as a YAML scalar: plain when that reads back as the
// same string, else double-quoted.
func YAMLString(s string) string {
	if plainString(s, false) {
		return s
	}
	return jsonString(s)
}
