package yamlx

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Fast reads the plain subset of YAML that render writes and people write
// specs in: block mappings and sequences, one-line flow mappings and
// sequences, plain and quoted one-line scalars, comments and document
// separators. Nodes are allocated a chunk at a time and scalars are slices
// of one copy of data, so it is many times faster than yaml.v3.
//
// Anything outside that subset (anchors, tags, block scalars, multi-line
// scalars or flow collections, null values, tabs, directives, duplicate
// keys, numbers in rarer forms) makes it return ok=false, and the caller
// reads the file with Full instead, so every error message and every
// unusual construct is yaml.v3's. FuzzParse checks that whenever it
// answers, Full gives the same nodes at the same positions.
func Fast(data []byte) (docs []Doc, ok bool) {
	var p fastReader
	return p.read(data)
}

// A Reader reads files with the fast reader again and again, reusing its
// memory: the nodes it returns are valid only until its next Fast. Use it
// to convert nodes to other values and drop them; the zero value is ready
// for use.
type Reader struct {
	p fastReader
}

// Fast is Fast, with the nodes valid until the next call.
func (r *Reader) Fast(data []byte) ([]Doc, bool) {
	r.p.reuse = true
	return r.p.read(data)
}

func (p *fastReader) read(data []byte) (docs []Doc, ok bool) {
	ok, p.ascii = printable(data)
	if !ok {
		return nil, false
	}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		return nil, false // byte order mark
	}
	// One chunk of nodes for the whole file, mostly: a colon stands for a
	// key and its value, a comma for one more item, a bracket for a
	// collection and its first item.
	est := 2*bytes.Count(data, []byte{':'}) + bytes.Count(data, []byte{','}) +
		2*(bytes.Count(data, []byte{'['})+bytes.Count(data, []byte{'{'})) + 4
	nlines := bytes.Count(data, []byte{'\n'}) + 1
	est = min(est, 4096)
	p.i, p.nodes, p.stack = 0, 0, p.stack[:0]
	p.slabUsed, p.kidUsed, p.chunk = 0, 0, est
	if !p.reuse {
		p.lines = make([]line, 0, nlines)
		p.slab, p.kidBuf = nil, nil
	} else {
		// The first chunks are kept from file to file.
		p.lines = p.lines[:0]
		if len(p.keptSlab) < est {
			p.keptSlab, p.keptKids = make([]Node, 2*est), make([]*Node, 2*est)
		}
		p.slab, p.kidBuf = p.keptSlab, p.keptKids
	}
	src := string(data) // one copy; lines and scalars are slices of it
	num := 0
	for len(src) > 0 {
		num++
		var raw string
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			raw, src = src[:i], src[i+1:]
		} else {
			raw, src = src, ""
		}
		ind := 0
		for ind < len(raw) && raw[ind] == ' ' {
			ind++
		}
		rest := raw[ind:]
		if len(rest) == 0 || rest[0] == '#' {
			continue // blank or comment line
		}
		if ind == 0 && (rest[0] == '%' || strings.HasPrefix(rest, "...")) {
			return nil, false // directives and document ends
		}
		if ind == 0 && strings.HasPrefix(rest, "---") {
			if len(rest) != 3 {
				return nil, false
			}
			p.lines = append(p.lines, line{num: num, sep: true})
			continue
		}
		p.lines = append(p.lines, line{indent: ind, text: rest, num: num})
	}
	for p.i < len(p.lines) {
		if p.lines[p.i].sep {
			p.i++
			if p.i >= len(p.lines) || p.lines[p.i].sep {
				docs = append(docs, Doc{}) // an empty document
			}
			continue
		}
		l := p.lines[p.i]
		if l.indent != 0 {
			return nil, false
		}
		root := p.block(0, 0)
		if root == nil {
			return nil, false
		}
		docs = append(docs, Doc{Root: root, Line: l.num})
		if p.i < len(p.lines) && !p.lines[p.i].sep {
			return nil, false // content left at a lower indent
		}
	}
	return docs, true
}

// printable reports whether data holds only the characters YAML allows,
// without tabs and carriage returns, and whether they are all ASCII.
func printable(data []byte) (ok, ascii bool) {
	ascii = true
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' || c == 0x7f {
				return false, false
			}
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r < 0xa0 || r == 0xfffe || r == 0xffff {
			return false, false
		}
		i += size
	}
	return true, ascii
}

// width returns the columns s takes: its characters.
func (p *fastReader) width(s string) int {
	if p.ascii {
		return len(s)
	}
	return utf8.RuneCountInString(s)
}

// line is one line that holds more than white space and a comment.
type line struct {
	indent int
	text   string // after the indentation
	num    int    // 1-based
	sep    bool   // a "---" document separator
}

// maxFastDepth keeps the fast reader well inside Full's depth limit.
const maxFastDepth = 100

// maxFastKeys bounds a mapping's keys: yaml.v3 checks large mappings for
// duplicates faster.
const maxFastKeys = 256

type fastReader struct {
	lines []line
	i     int // next line
	nodes int
	reuse bool // a Reader's: memory is reused from one file to the next
	ascii bool // the file is all ASCII: a byte is a column
	// Nodes are allocated from slab, a chunk at a time, and the kids of
	// collections from kidBuf. stack holds the kids of the collections
	// being read.
	slab     []Node
	slabUsed int
	chunk    int // the size of the next chunk
	kidBuf   []*Node
	kidUsed  int
	stack    []*Node
	// A Reader's first chunks.
	keptSlab []Node
	keptKids []*Node
}

// newNode returns a new node, or nil when the file has too many.
func (p *fastReader) newNode(kind Kind, line, col int) *Node {
	p.nodes++
	if p.nodes > maxNodes {
		return nil
	}
	if p.slabUsed == len(p.slab) {
		p.slab, p.slabUsed = make([]Node, p.chunk), 0
		p.chunk = 128
	}
	n := &p.slab[p.slabUsed]
	p.slabUsed++
	*n = Node{Kind: kind, Line: int32(line), Col: int32(col)}
	return n
}

// kids returns the kids pushed on the stack since start, and pops them.
func (p *fastReader) kids(start int) []*Node {
	k := p.stack[start:]
	if len(p.kidBuf)-p.kidUsed < len(k) {
		p.kidBuf, p.kidUsed = make([]*Node, max(len(k), 4*len(p.lines), 64)), 0
	}
	out := p.kidBuf[p.kidUsed : p.kidUsed+len(k) : p.kidUsed+len(k)]
	copy(out, k)
	p.kidUsed += len(k)
	p.stack = p.stack[:start]
	return out
}

// hasKey reports whether the mapping whose kids start on the stack at
// start already has key.
func (p *fastReader) hasKey(start int, key string) bool {
	for i := start; i < len(p.stack); i += 2 {
		if p.stack[i].Str == key {
			return true
		}
	}
	return false
}

// block reads the mapping or sequence starting at the current line, whose
// indent is ind.
func (p *fastReader) block(ind, depth int) *Node {
	if depth > maxFastDepth {
		return nil
	}
	l := p.lines[p.i]
	if isSeqItem(l.text) {
		return p.seq(ind, depth)
	}
	return p.mapping(ind, l.text, l.indent, depth)
}

func isSeqItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

// seq reads a block sequence whose dashes are at indent ind.
func (p *fastReader) seq(ind, depth int) *Node {
	first := p.lines[p.i]
	s := p.newNode(SeqNode, first.num, ind+1)
	if s == nil {
		return nil
	}
	start := len(p.stack)
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.sep || l.indent < ind {
			break
		}
		if l.indent > ind || !isSeqItem(l.text) {
			if l.indent == ind {
				break // the parent mapping's next key
			}
			return nil
		}
		if l.text == "-" {
			p.i++
			if p.i < len(p.lines) && !p.lines[p.i].sep && p.lines[p.i].indent > ind {
				item := p.block(p.lines[p.i].indent, depth+1)
				if item == nil {
					return nil
				}
				p.stack = append(p.stack, item)
				continue
			}
			return nil // a null item: yaml.v3 places it oddly
		}
		rest := l.text[2:]
		off := 2
		for len(rest) > 0 && rest[0] == ' ' {
			rest, off = rest[1:], off+1
		}
		col := ind + off
		var item *Node
		switch {
		case rest == "" || isSeqItem(rest) || rest[0] == '?' || rest[0] == '#':
			return nil
		case hasMapKey(rest):
			item = p.mapping(col, rest, col, depth+1)
			if item == nil {
				return nil
			}
			p.stack = append(p.stack, item)
			continue
		case rest[0] == '[' || rest[0] == '{':
			item = p.flowValue(rest, l.num, col+1, depth+1)
		default:
			item = p.scalar(rest, l.num, col+1)
		}
		if item == nil {
			return nil
		}
		p.stack = append(p.stack, item)
		p.i++
		if !p.noContinuation(ind) {
			return nil
		}
	}
	s.Kids = p.kids(start)
	return s
}

// hasMapKey reports whether s starts with "key:" followed by a space or the
// end of the line.
func hasMapKey(s string) bool {
	_, _, ok := splitKey(s)
	return ok
}

// splitKey splits "key: value" into the raw key and the value text.
func splitKey(s string) (key, value string, ok bool) {
	if s == "" || s[0] == '[' || s[0] == '{' {
		return "", "", false
	}
	if s[0] == '"' || s[0] == '\'' {
		end := quotedEnd(s)
		if end < 0 || end+1 == len(s) || s[end+1] != ':' {
			return "", "", false
		}
		if end+2 < len(s) && s[end+2] != ' ' {
			return "", "", false
		}
		return s[:end+1], strings.TrimLeft(s[end+2:], " "), true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ':' && (i+1 == len(s) || s[i+1] == ' ') {
			return s[:i], strings.TrimLeft(s[i+1:], " "), true
		}
		if s[i] == ' ' && i+1 < len(s) && s[i+1] == '#' {
			return "", "", false
		}
	}
	return "", "", false
}

// mapping reads a block mapping whose keys are at indent ind. The first
// entry is first (the rest of a "- " line, at column firstCol+1, or a whole
// line).
func (p *fastReader) mapping(ind int, first string, firstCol, depth int) *Node {
	if depth > maxFastDepth {
		return nil
	}
	l := p.lines[p.i]
	m := p.newNode(MapNode, l.num, firstCol+1)
	if m == nil {
		return nil
	}
	text, col := first, firstCol
	start := len(p.stack)
	for {
		rawKey, value, ok := splitKey(text)
		if !ok {
			return nil
		}
		key := p.key(rawKey, l.num, col+1)
		if key == nil || len(p.stack)-start >= 2*maxFastKeys || p.hasKey(start, key.Str) {
			return nil // duplicate keys: yaml.v3 reports them
		}
		valCol := col + p.width(text[:len(text)-len(value)]) + 1
		var val *Node
		p.i++
		switch {
		case value == "" || value[0] == '#':
			val = p.nested(ind, depth)
		case value[0] == '[' || value[0] == '{':
			if val = p.flowValue(value, l.num, valCol, depth+1); val != nil && !p.noContinuation(ind) {
				val = nil
			}
		default:
			if val = p.scalar(value, l.num, valCol); val != nil && !p.noContinuation(ind) {
				val = nil
			}
		}
		if val == nil {
			return nil
		}
		p.stack = append(p.stack, key, val)
		if p.i >= len(p.lines) {
			break
		}
		l = p.lines[p.i]
		if l.sep || l.indent < ind {
			break
		}
		if l.indent > ind || isSeqItem(l.text) {
			return nil
		}
		text, col = l.text, l.indent
	}
	m.Kids = p.kids(start)
	return m
}

// nested reads the value of "key:" with nothing after the colon: a block
// on the following lines or a sequence at the key's own indent.
func (p *fastReader) nested(ind, depth int) *Node {
	if p.i < len(p.lines) {
		l := p.lines[p.i]
		switch {
		case l.sep:
		case l.indent > ind:
			return p.block(l.indent, depth+1)
		case l.indent == ind && isSeqItem(l.text):
			return p.seq(ind, depth+1)
		}
	}
	return nil // a null value: yaml.v3 places it oddly
}

// noContinuation reports whether the line after a value is not indented
// deeper than its key, which would make a multi-line scalar.
func (p *fastReader) noContinuation(ind int) bool {
	return p.i >= len(p.lines) || p.lines[p.i].sep || p.lines[p.i].indent <= ind
}

// key reads a mapping key, which must read as a string.
func (p *fastReader) key(s string, line, col int) *Node {
	if len(s) > 1000 {
		return nil
	}
	n := p.scalar(s, line, col)
	if n == nil || n.Tag != StrTag || n.Str == "<<" {
		return nil
	}
	return n
}

// scalar reads a one-line block scalar, with an optional trailing comment.
func (p *fastReader) scalar(s string, line, col int) *Node {
	if s == "" {
		return nil
	}
	if s[0] == '"' || s[0] == '\'' {
		end := quotedEnd(s)
		if end < 0 || !restIsComment(s, end+1) {
			return nil
		}
		v, ok := unquote(s[:end+1])
		if !ok {
			return nil
		}
		n := p.newNode(ScalarNode, line, col)
		if n == nil {
			return nil
		}
		n.Str = v
		return n
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, " ")
	if !plainStart(s, false) || s[len(s)-1] == ':' || strings.Contains(s, ": ") || !p.ascii && oddRunes(s) {
		return nil
	}
	tag, canon, ok := resolvePlain(s)
	if !ok {
		return nil
	}
	n := p.newNode(ScalarNode, line, col)
	if n == nil {
		return nil
	}
	n.Tag, n.Str = tag, canon
	return n
}

// restIsComment reports whether only spaces and a comment follow s[i:].
func restIsComment(s string, i int) bool {
	if i == len(s) {
		return true
	}
	if s[i] != ' ' {
		return false
	}
	i = skipSpaces(s, i)
	return i == len(s) || s[i] == '#'
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// flowValue reads a flow mapping or sequence that s starts with, at column
// col, which must end on its line.
func (p *fastReader) flowValue(s string, line, col, depth int) *Node {
	f := flow{p: p, s: s, line: line, col: col}
	n, end := f.collection(0, depth)
	if n == nil || !restIsComment(s, end) {
		return nil
	}
	return n
}

// flow reads the flow collections of one line's text s, which starts at
// column col.
type flow struct {
	p         *fastReader
	s         string
	line, col int
}

func (f *flow) colAt(i int) int { return f.col + f.p.width(f.s[:i]) }

// collection reads the flow collection at s[i], and returns it and where
// it ends.
func (f *flow) collection(i, depth int) (*Node, int) {
	s := f.s
	if depth > maxFastDepth {
		return nil, 0
	}
	kind, closing := SeqNode, byte(']')
	if s[i] == '{' {
		kind, closing = MapNode, '}'
	}
	n := f.p.newNode(kind, f.line, f.colAt(i))
	if n == nil {
		return nil, 0
	}
	start := len(f.p.stack)
	i = skipSpaces(s, i+1)
	if i < len(s) && s[i] == closing {
		n.Kids = f.p.kids(start)
		return n, i + 1
	}
	for {
		if i >= len(s) {
			return nil, 0
		}
		if kind == MapNode {
			k, e := f.scalar(i, true)
			if k == nil || k.Tag != StrTag || k.Str == "<<" || len(f.p.stack)-start >= 2*maxFastKeys || f.p.hasKey(start, k.Str) {
				return nil, 0
			}
			// A colon, a space, then a value that is not empty.
			i = skipSpaces(s, e)
			if i+1 >= len(s) || s[i] != ':' || s[i+1] != ' ' {
				return nil, 0
			}
			i = skipSpaces(s, i+1)
			v, e := f.node(i, depth)
			if v == nil {
				return nil, 0
			}
			f.p.stack = append(f.p.stack, k, v)
			i = e
		} else {
			v, e := f.node(i, depth)
			if v == nil {
				return nil, 0
			}
			f.p.stack = append(f.p.stack, v)
			i = e
		}
		i = skipSpaces(s, i)
		if i >= len(s) {
			return nil, 0
		}
		switch s[i] {
		case closing:
			n.Kids = f.p.kids(start)
			return n, i + 1
		case ',':
			i = skipSpaces(s, i+1)
			if i < len(s) && (s[i] == ',' || s[i] == ']' || s[i] == '}') {
				return nil, 0 // empty or trailing entries: yaml.v3 reads them
			}
		default:
			return nil, 0
		}
	}
}

// node reads one value inside a flow collection.
func (f *flow) node(i, depth int) (*Node, int) {
	if i >= len(f.s) {
		return nil, 0
	}
	if c := f.s[i]; c == '[' || c == '{' {
		return f.collection(i, depth+1)
	}
	return f.scalar(i, false)
}

// scalar reads a plain or quoted scalar inside a flow collection, up to a
// comma, a closing bracket or (for keys) ": ".
func (f *flow) scalar(i int, isKey bool) (*Node, int) {
	s := f.s
	if s[i] == '\'' || s[i] == '"' {
		end := quotedEnd(s[i:])
		if end < 0 {
			return nil, 0
		}
		v, ok := unquote(s[i : i+end+1])
		if !ok {
			return nil, 0
		}
		n := f.p.newNode(ScalarNode, f.line, f.colAt(i))
		if n == nil {
			return nil, 0
		}
		n.Str = v
		return n, i + end + 1
	}
	e := i
	for e < len(s) {
		c := s[e]
		if c == ',' || c == ']' || c == '}' {
			break
		}
		if c == '[' || c == '{' || c == '?' || (c == '#' && e > i && s[e-1] == ' ') {
			return nil, 0
		}
		if c == ':' && (e+1 == len(s) || s[e+1] == ' ' || s[e+1] == ',' || s[e+1] == ']' || s[e+1] == '}' || s[e+1] == '[' || s[e+1] == '{') {
			if !isKey || e+1 == len(s) || s[e+1] != ' ' {
				return nil, 0
			}
			break
		}
		e++
	}
	text := strings.TrimRight(s[i:e], " ")
	if !plainStart(text, true) || !f.p.ascii && oddRunes(text) {
		return nil, 0
	}
	tag, canon, ok := resolvePlain(text)
	if !ok || isKey && len(text) > 1000 {
		return nil, 0
	}
	n := f.p.newNode(ScalarNode, f.line, f.colAt(i))
	if n == nil {
		return nil, 0
	}
	n.Tag, n.Str = tag, canon
	return n, e
}
