package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/fleetwright/fleetwright/internal/manifest"
)

// node is a parsed YAML value with its position: the JSON-compatible view of
// a Kubernetes object that the checks walk. A mapping keeps its keys in
// document order, as key and value pairs in kids.
type node struct {
	kids      []*node // mapping: k0, v0, k1, v1, ...; sequence: items
	str       string  // scalar: the string, or the canonical JSON text of a number
	line, col int32
	kind      nodeKind
	tag       scalarTag
}

type nodeKind uint8

const (
	scalarNode nodeKind = iota
	mapNode
	seqNode
)

type scalarTag uint8

const (
	tagStr scalarTag = iota
	tagInt
	tagFloat
	tagBool
	tagNull
)

// get returns the value of key in a mapping, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != mapNode {
		return nil
	}
	for i := 0; i < len(n.kids); i += 2 {
		if n.kids[i].str == key {
			return n.kids[i+1]
		}
	}
	return nil
}

// text returns a scalar's string, or "" for anything else.
func (n *node) text() string {
	if n == nil || n.kind != scalarNode || n.tag == tagNull {
		return ""
	}
	return n.str
}

func (n *node) isNull() bool { return n == nil || n.kind == scalarNode && n.tag == tagNull }

// path returns the node at a field path such as
// spec.template.spec.containers[0].image, and the node of its last key (for
// positions of missing or unknown fields). Either may be nil. Keys may hold
// dots (metadata.labels.app.kubernetes.io/name): the longest key that
// starts the rest of the path wins.
func (n *node) path(p string) (val, key *node) {
	val = n
	for p != "" && val != nil {
		if p[0] == '[' {
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, key
			}
			i, err := strconv.Atoi(p[1:end])
			if err != nil || val.kind != seqNode || i < 0 || i >= len(val.kids) {
				return nil, key
			}
			val, key = val.kids[i], val.kids[i]
			p = strings.TrimPrefix(p[end+1:], ".")
			continue
		}
		if val.kind != mapNode {
			return nil, nil
		}
		best := -1
		for i := 0; i < len(val.kids); i += 2 {
			k := val.kids[i].str
			if strings.HasPrefix(p, k) && (len(p) == len(k) || p[len(k)] == '.' || p[len(k)] == '[') &&
				(best < 0 || len(k) > len(val.kids[best].str)) {
				best = i
			}
		}
		if best < 0 {
			return nil, nil
		}
		key = val.kids[best]
		p = strings.TrimPrefix(p[len(key.str):], ".")
		val = val.kids[best+1]
	}
	return val, key
}

// doc is one YAML document of a file.
type doc struct {
	root *node // nil for an empty document
	line int   // line of the document's first content
}

// errSubset means the fast parser met YAML outside the subset it reads; the
// full parser takes over.
var errSubset = errors.New("outside the fast YAML subset")

// yamlError is a YAML syntax or structure error at a line.
type yamlError struct {
	line, col int
	msg       string
}

func (e *yamlError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// parseYAML reads every document of a YAML file. Most fleet files are
// written by render's emitter in a small regular subset of YAML (block
// mappings and sequences, plain and quoted single-line scalars); those are
// read by a fast line parser. Anything else goes through yaml.v3, with the
// same result: the two agree on every input the fast parser accepts (see
// FuzzParseYAML).
func parseYAML(data []byte) ([]doc, error) {
	if docs, err := parseFast(data); err == nil {
		return docs, nil
	}
	return parseFull(data)
}

// ---------------------------------------------------------------------------
// The fast parser.

type line struct {
	indent int
	text   string // without indentation, trailing comment-free only for structure
	num    int    // 1-based
	sep    bool   // a "---" document separator
}

// printable reports whether data holds only the characters YAML allows,
// without tabs and carriage returns.
func printable(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r < 0xa0 || r == 0xfffe || r == 0xffff {
			return false
		}
		i += size
	}
	return true
}

type fastParser struct {
	lines []line
	i     int
	nodes int
	slab  []node // nodes are allocated from here, a chunk at a time
}

func parseFast(data []byte) ([]doc, error) {
	if !printable(data) {
		return nil, errSubset
	}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		return nil, errSubset // byte order mark
	}
	p := &fastParser{lines: make([]line, 0, bytes.Count(data, []byte{'\n'})+1)}
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
			return nil, errSubset // directives and document ends
		}
		if ind == 0 && strings.HasPrefix(rest, "---") {
			if len(rest) != 3 {
				return nil, errSubset
			}
			p.lines = append(p.lines, line{num: num, sep: true})
			continue
		}
		p.lines = append(p.lines, line{indent: ind, text: rest, num: num})
	}
	var docs []doc
	for p.i < len(p.lines) {
		if p.lines[p.i].sep {
			p.i++
			if p.i >= len(p.lines) || p.lines[p.i].sep {
				docs = append(docs, doc{}) // an empty document
			}
			continue
		}
		l := p.lines[p.i]
		if l.indent != 0 {
			return nil, errSubset
		}
		root, err := p.block(0)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc{root: root, line: l.num})
		if p.i < len(p.lines) && !p.lines[p.i].sep {
			return nil, errSubset // content left at a lower indent
		}
	}
	return docs, nil
}

// block parses the mapping or sequence starting at the current line, whose
// indent is ind.
func (p *fastParser) block(ind int) (*node, error) {
	l := p.lines[p.i]
	if isSeqItem(l.text) {
		return p.seq(ind)
	}
	return p.mapping(ind, l.text, l.indent)
}

func isSeqItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

func (p *fastParser) newNode(kind nodeKind, line, col int) (*node, error) {
	p.nodes++
	if p.nodes > maxNodes {
		return nil, errSubset
	}
	if len(p.slab) == 0 {
		p.slab = make([]node, 128)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.kind, n.line, n.col = kind, int32(line), int32(col)
	return n, nil
}

// maxNodes bounds the nodes of one file, for either parser.
const maxNodes = 1 << 20

// seq parses a block sequence whose dashes are at indent ind.
func (p *fastParser) seq(ind int) (*node, error) {
	first := p.lines[p.i]
	s, err := p.newNode(seqNode, first.num, ind+1)
	if err != nil {
		return nil, err
	}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.sep || l.indent < ind {
			break
		}
		if l.indent > ind || !isSeqItem(l.text) {
			if l.indent == ind {
				break // the parent mapping's next key
			}
			return nil, errSubset
		}
		if l.text == "-" {
			p.i++
			if p.i < len(p.lines) && !p.lines[p.i].sep && p.lines[p.i].indent > ind {
				item, err := p.block(p.lines[p.i].indent)
				if err != nil {
					return nil, err
				}
				s.kids = append(s.kids, item)
				continue
			}
			return nil, errSubset // a null item: rare, leave it to yaml.v3
		}
		rest := l.text[2:]
		off := 2
		for len(rest) > 0 && rest[0] == ' ' {
			rest, off = rest[1:], off+1
		}
		col := ind + off
		switch {
		case rest == "" || isSeqItem(rest) || rest[0] == '?':
			return nil, errSubset
		case isEmptyFlow(rest):
			n, err := p.emptyFlow(rest[:2], l.num, col+1)
			if err != nil {
				return nil, err
			}
			s.kids = append(s.kids, n)
			p.i++
		case hasMapKey(rest):
			m, err := p.mapping(col, rest, col)
			if err != nil {
				return nil, err
			}
			s.kids = append(s.kids, m)
		default:
			v, err := p.scalar(rest, l.num, col+1)
			if err != nil {
				return nil, err
			}
			s.kids = append(s.kids, v)
			p.i++
			if err := p.noContinuation(ind); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// hasMapKey reports whether s starts with "key:" followed by a space or the
// end of the line.
func hasMapKey(s string) bool {
	_, _, ok := splitKey(s)
	return ok
}

// splitKey splits "key: value" into the raw key and the value text.
func splitKey(s string) (key, value string, ok bool) {
	if s == "" {
		return "", "", false
	}
	if s[0] == '"' || s[0] == '\'' {
		end := quotedEnd(s)
		if end < 0 || end+1 > len(s) || end+1 == len(s) || s[end+1] != ':' {
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

// quotedEnd returns the index of the closing quote of the quoted scalar
// that s starts with, or -1.
func quotedEnd(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i
		}
	}
	return -1
}

// mapping parses a block mapping whose keys are at indent ind. The first
// entry is first (the rest of a "- " line, at column firstCol+1, or a whole
// line).
func (p *fastParser) mapping(ind int, first string, firstCol int) (*node, error) {
	l := p.lines[p.i]
	m, err := p.newNode(mapNode, l.num, firstCol+1)
	if err != nil {
		return nil, err
	}
	text, col := first, firstCol
	for {
		rawKey, value, ok := splitKey(text)
		if !ok {
			return nil, errSubset
		}
		key, err := p.key(rawKey, l.num, col+1)
		if err != nil {
			return nil, err
		}
		if len(m.kids) > 512 {
			return nil, errSubset // large mappings: yaml.v3 checks their keys faster
		}
		for i := 0; i < len(m.kids); i += 2 {
			if m.kids[i].str == key.str {
				return nil, errSubset // duplicate keys: yaml.v3 reports them
			}
		}
		valCol := col + utf8.RuneCountInString(text[:len(text)-len(value)]) + 1 // columns count characters
		var val *node
		p.i++
		switch {
		case value == "":
			val, err = p.nested(ind, l.num)
		case isEmptyFlow(value):
			val, err = p.emptyFlow(value[:2], l.num, valCol)
		default:
			val, err = p.scalar(value, l.num, valCol)
			if err == nil {
				err = p.noContinuation(ind)
			}
		}
		if err != nil {
			return nil, err
		}
		m.kids = append(m.kids, key, val)
		if p.i >= len(p.lines) {
			break
		}
		l = p.lines[p.i]
		if l.sep || l.indent < ind {
			break
		}
		if l.indent > ind || isSeqItem(l.text) {
			return nil, errSubset
		}
		text, col = l.text, l.indent
	}
	return m, nil
}

// nested parses the value of "key:" with nothing after the colon: a block
// on the following lines, a sequence at the key's own indent, or null.
func (p *fastParser) nested(ind, keyLine int) (*node, error) {
	if p.i < len(p.lines) {
		l := p.lines[p.i]
		switch {
		case l.sep:
		case l.indent > ind:
			return p.block(l.indent)
		case l.indent == ind && isSeqItem(l.text):
			return p.seq(ind)
		}
	}
	// A null value; yaml.v3 places it oddly, and render never writes one.
	return nil, errSubset
}

// noContinuation fails when the line after a scalar is indented deeper
// than its key: a multi-line plain scalar.
func (p *fastParser) noContinuation(ind int) error {
	if p.i < len(p.lines) && !p.lines[p.i].sep && p.lines[p.i].indent > ind {
		return errSubset
	}
	return nil
}

// isEmptyFlow reports whether s is {} or [], with an optional comment.
func isEmptyFlow(s string) bool {
	if len(s) < 2 || s[:2] != "{}" && s[:2] != "[]" {
		return false
	}
	rest := strings.TrimLeft(s[2:], " ")
	return rest == "" || rest[0] == '#' && len(rest) < len(s)-2
}

func (p *fastParser) emptyFlow(s string, line, col int) (*node, error) {
	kind := mapNode
	if s == "[]" {
		kind = seqNode
	}
	n, err := p.newNode(kind, line, col)
	if err != nil {
		return nil, err
	}
	n.kids = []*node{}
	return n, nil
}

// key parses a mapping key, which must read as a string.
func (p *fastParser) key(s string, line, col int) (*node, error) {
	n, err := p.scalar(s, line, col)
	if err != nil {
		return nil, err
	}
	if n.tag != tagStr || len(s) > 1000 || n.str == "<<" {
		return nil, errSubset
	}
	return n, nil
}

// scalar parses a single-line scalar, with an optional trailing comment.
func (p *fastParser) scalar(s string, line, col int) (*node, error) {
	if s == "" {
		return nil, errSubset
	}
	n, err := p.newNode(scalarNode, line, col)
	if err != nil {
		return nil, err
	}
	switch s[0] {
	case '"', '\'':
		end := quotedEnd(s)
		if end < 0 {
			return nil, errSubset
		}
		if rest := strings.TrimLeft(s[end+1:], " "); rest != "" && !(rest[0] == '#' && len(rest) < len(s[end+1:])) {
			return nil, errSubset
		}
		v, ok := unquote(s[:end+1])
		if !ok {
			return nil, errSubset
		}
		n.str = v
		return n, nil
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, " ")
	if s == "" {
		return nil, errSubset
	}
	tag, canon, ok := resolvePlain(s)
	if !ok {
		return nil, errSubset
	}
	n.tag, n.str = tag, canon
	return n, nil
}

// resolvePlain types a plain scalar the way yaml.v3 does, for the forms
// that every YAML 1.1 and 1.2 reader types alike. ok is false for anything
// else (yes/no, octals, exponents, timestamps, indicators, ...).
func resolvePlain(s string) (tag scalarTag, canon string, ok bool) {
	switch s {
	case "true", "True", "TRUE":
		return tagBool, "true", true
	case "false", "False", "FALSE":
		return tagBool, "false", true
	case "null", "Null", "NULL", "~":
		return tagNull, "", true
	}
	c := s[0]
	switch {
	case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
		switch {
		case isPlainInt(s):
			if s == "-0" {
				return tagInt, "0", true
			}
			return tagInt, s, true
		case isPlainFloat(s):
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return 0, "", false
			}
			return tagFloat, formatFloat(f), true
		case c >= '0' && c <= '9' && manifest.UnitNumber(s):
			return tagStr, s, plainChars(s)
		case c == '.' && len(s) > 1 && (s[1] == '/' || strings.HasPrefix(s, "../")):
			return tagStr, s, plainChars(s)
		case c == '-' && len(s) > 1 && (s[1] >= 'a' && s[1] <= 'z' || s[1] >= 'A' && s[1] <= 'Z' || s[1] == '-' && len(s) > 2 && s[2] != '-'):
			return tagStr, s, plainChars(s)
		}
		return 0, "", false
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '_' || c == '$' || c == '(' || c >= 0x80:
		if len(s) <= 5 {
			for _, w := range yaml11Words {
				if strings.EqualFold(s, w) {
					return 0, "", false
				}
			}
		}
		return tagStr, s, plainChars(s)
	}
	return 0, "", false
}

// yaml11Words are the plain words some YAML readers take for booleans or
// null, in any case.
var yaml11Words = []string{"y", "n", "yes", "no", "on", "off", "true", "false", "null"}

// isPlainInt matches -?(0|[1-9][0-9]{0,17}).
func isPlainInt(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || len(s) > 18 || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isPlainFloat matches -?(0|[1-9][0-9]{0,15})\.[0-9]{1,15}.
func isPlainFloat(s string) bool {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(whole) > 17 || frac == "" || len(frac) > 15 || !isPlainInt(whole) {
		return false
	}
	for i := 0; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return false
		}
	}
	return true
}

// plainSafe marks the bytes that may appear anywhere in a plain scalar the
// fast parser accepts; ' ' and ':' are checked with what follows them.
var plainSafe = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("-_./()$=+@%~^,;*!?<>") {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// plainChars reports whether a plain scalar holds only characters that
// cannot change its meaning.
func plainChars(s string) bool {
	if s[len(s)-1] == ':' {
		return false
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plainSafe[c] {
			ascii = ascii && c < 0x80
			continue
		}
		switch {
		case c == ' ':
			if i+1 < len(s) && s[i+1] == '#' {
				return false
			}
		case c == ':':
			if i+1 < len(s) && s[i+1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	// Code points that YAML treats as line breaks or reserves.
	return ascii || !strings.ContainsAny(s, "\u0085\u2028\u2029\ufeff")
}

// unquote decodes a single-line quoted scalar, or reports false for
// escapes it does not know.
func unquote(q string) (string, bool) {
	body := q[1 : len(q)-1]
	if q[0] == '\'' {
		return strings.ReplaceAll(body, "''", "'"), true
	}
	if strings.IndexByte(body, '\\') < 0 {
		return body, true
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", false
		}
		switch body[i] {
		case '\\', '"':
			b.WriteByte(body[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'x', 'u', 'U':
			size := 2
			switch body[i] {
			case 'u':
				size = 4
			case 'U':
				size = 8
			}
			if i+1+size > len(body) {
				return "", false
			}
			v, err := strconv.ParseUint(body[i+1:i+1+size], 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return "", false
			}
			b.WriteRune(rune(v))
			i += size
		default:
			return "", false
		}
	}
	return b.String(), true
}

// ---------------------------------------------------------------------------
// The full parser: yaml.v3 nodes converted to the same form.

func parseFull(data []byte) ([]doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []doc
	nodes := 0
	for {
		var yn yaml.Node
		err := dec.Decode(&yn)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return docs, yamlErr(data, err)
		}
		var d doc
		if yn.Kind == yaml.DocumentNode && len(yn.Content) == 1 {
			c := &converter{nodes: &nodes}
			root, err := c.convert(yn.Content[0], 0)
			if err != nil {
				return docs, err
			}
			if !root.isNull() {
				d.root = root
				d.line = yn.Content[0].Line
			}
		}
		docs = append(docs, d)
	}
	return docs, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErr turns a yaml.v3 error into a yamlError. yaml.v3 numbers some
// errors from the line before the problem; the line reported is instead the
// first at which a prefix of the file stops being valid YAML.
func yamlErr(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		msg = m[2]
	}
	return &yamlError{line: firstBadLine(data), col: 1, msg: msg}
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

type converter struct {
	nodes *int
}

func (c *converter) convert(yn *yaml.Node, depth int) (*node, error) {
	*c.nodes++
	if *c.nodes > maxNodes || depth > 200 {
		return nil, &yamlError{line: yn.Line, col: yn.Column, msg: "document too large or too deep"}
	}
	n := &node{line: int32(yn.Line), col: int32(yn.Column)}
	switch yn.Kind {
	case yaml.AliasNode:
		if yn.Alias == nil {
			return nil, &yamlError{line: yn.Line, col: yn.Column, msg: "unknown alias"}
		}
		return c.convert(yn.Alias, depth+1)
	case yaml.MappingNode:
		n.kind = mapNode
		n.kids = []*node{}
		seen := map[string]bool{}
		var merges []*yaml.Node
		for i := 0; i+1 < len(yn.Content); i += 2 {
			k, v := yn.Content[i], yn.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				merges = append(merges, v)
				continue
			}
			key, err := c.convert(k, depth+1)
			if err != nil {
				return nil, err
			}
			if key.kind != scalarNode {
				return nil, &yamlError{line: k.Line, col: k.Column, msg: "mapping keys must be scalars"}
			}
			key.tag = tagStr // JSON keys are strings, as sigs.k8s.io/yaml makes them
			if seen[key.str] {
				return nil, &yamlError{line: k.Line, col: k.Column, msg: fmt.Sprintf("duplicate key %q", key.str)}
			}
			seen[key.str] = true
			val, err := c.convert(v, depth+1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, key, val)
		}
		for _, m := range merges {
			if err := c.merge(n, m, seen, depth); err != nil {
				return nil, err
			}
		}
	case yaml.SequenceNode:
		n.kind = seqNode
		n.kids = make([]*node, 0, len(yn.Content))
		for _, item := range yn.Content {
			v, err := c.convert(item, depth+1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, v)
		}
	case yaml.ScalarNode:
		if err := scalarValue(yn, n); err != nil {
			return nil, err
		}
	default:
		return nil, &yamlError{line: yn.Line, col: yn.Column, msg: "unexpected YAML node"}
	}
	return n, nil
}

// merge applies a "<<" merge key: the keys of the merged mappings that the
// mapping does not set itself.
func (c *converter) merge(n *node, m *yaml.Node, seen map[string]bool, depth int) error {
	for m.Kind == yaml.AliasNode && m.Alias != nil {
		m = m.Alias
	}
	var maps []*yaml.Node
	switch m.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{m}
	case yaml.SequenceNode:
		for _, x := range m.Content {
			for x.Kind == yaml.AliasNode && x.Alias != nil {
				x = x.Alias
			}
			maps = append(maps, x)
		}
	}
	for _, mm := range maps {
		if mm.Kind != yaml.MappingNode {
			return &yamlError{line: m.Line, col: m.Column, msg: "map merge requires a mapping or a list of mappings"}
		}
		src, err := c.convert(mm, depth+1)
		if err != nil {
			return err
		}
		for i := 0; i < len(src.kids); i += 2 {
			if !seen[src.kids[i].str] {
				seen[src.kids[i].str] = true
				n.kids = append(n.kids, src.kids[i], src.kids[i+1])
			}
		}
	}
	return nil
}

func scalarValue(yn *yaml.Node, n *node) error {
	n.kind = scalarNode
	switch yn.ShortTag() {
	case "!!null":
		n.tag = tagNull
	case "!!bool":
		var b bool
		if err := yn.Decode(&b); err != nil {
			return &yamlError{line: yn.Line, col: yn.Column, msg: err.Error()}
		}
		n.tag, n.str = tagBool, strconv.FormatBool(b)
	case "!!int":
		var v any
		if err := yn.Decode(&v); err != nil {
			return &yamlError{line: yn.Line, col: yn.Column, msg: err.Error()}
		}
		switch v := v.(type) {
		case int:
			n.tag, n.str = tagInt, strconv.Itoa(v)
		case int64:
			n.tag, n.str = tagInt, strconv.FormatInt(v, 10)
		case uint64:
			n.tag, n.str = tagInt, strconv.FormatUint(v, 10)
		case float64:
			n.tag, n.str = tagFloat, formatFloat(v)
		default:
			n.tag, n.str = tagStr, yn.Value
		}
	case "!!float":
		var f float64
		if err := yn.Decode(&f); err != nil {
			return &yamlError{line: yn.Line, col: yn.Column, msg: err.Error()}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return &yamlError{line: yn.Line, col: yn.Column, msg: fmt.Sprintf("%s cannot be represented in JSON", yn.Value)}
		}
		n.tag, n.str = tagFloat, formatFloat(f)
	case "!!timestamp":
		// sigs.k8s.io/yaml keeps timestamps as the written string.
		n.str = yn.Value
	default: // !!str, !!binary and unknown tags keep the text
		n.str = yn.Value
	}
	return nil
}

// formatFloat writes f as encoding/json does.
func formatFloat(f float64) string {
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	b := strconv.AppendFloat(nil, f, fmtc, -1, 64)
	if fmtc == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// JSON.

// appendJSON writes n as JSON.
func appendJSON(b []byte, n *node) []byte {
	switch {
	case n == nil:
		b = append(b, "null"...)
	case n.kind == mapNode:
		b = append(b, '{')
		for i := 0; i < len(n.kids); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, n.kids[i].str)
			b = append(b, ':')
			b = appendJSON(b, n.kids[i+1])
		}
		b = append(b, '}')
	case n.kind == seqNode:
		b = append(b, '[')
		for i, k := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, k)
		}
		b = append(b, ']')
	default:
		switch n.tag {
		case tagNull:
			b = append(b, "null"...)
		case tagInt, tagFloat, tagBool:
			b = append(b, n.str...)
		default:
			b = appendJSONString(b, n.str)
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
