package spec

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// fastParse reads the plain subset of YAML that nearly every spec is written
// in: block maps and lists, one-line flow maps and lists, plain and simply
// quoted one-line scalars, and comments. It returns the same generic value
// that Parse would build from yaml.v3's tree, about ten times faster and
// without a node per value.
//
// Anything outside that subset (anchors, tags, block scalars, multi-line
// scalars or flow collections, escapes, tabs, non-ASCII bytes, documents
// markers, duplicate keys, odd numbers) makes it return ok=false, and the
// caller parses the file with yaml.v3 instead, so every error message and
// every unusual construct is yaml.v3's. FuzzFastParse checks that whenever
// it answers, yaml.v3 agrees.
func fastParse(data []byte) (v any, ok bool) {
	for _, c := range data {
		// Tabs, carriage returns, other control bytes and non-ASCII bytes
		// all take the general path.
		if c >= 0x7f || (c < ' ' && c != '\n') {
			return nil, false
		}
	}
	p := fastParser{data: data}
	if !p.splitLines() || len(p.lines) == 0 {
		return nil, false
	}
	v, ok = p.block(p.lines[0].indent, 0)
	if !ok || p.i != len(p.lines) {
		return nil, false
	}
	return v, true
}

// fastLine is one line that holds more than white space and a comment; its
// text runs from start to end, trailing spaces removed.
type fastLine struct {
	indent     int // spaces before the text, or the column a compact map starts at
	start, end int
}

// fastMaxDepth is well under maxDepth, so that the converter's depth limit
// is never the general path's alone to find.
const fastMaxDepth = maxDepth / 2

type fastParser struct {
	data  []byte
	lines []fastLine
	i     int // next line
	nodes int
}

func (p *fastParser) splitLines() bool {
	d := p.data
	for off := 0; off < len(d); {
		eol := bytes.IndexByte(d[off:], '\n')
		if eol < 0 {
			eol = len(d)
		} else {
			eol += off
		}
		s := off
		for s < eol && d[s] == ' ' {
			s++
		}
		e := eol
		for e > s && d[e-1] == ' ' {
			e--
		}
		if s < e && d[s] != '#' {
			line := d[s:e]
			// Directives and document markers take the general path.
			if s == off && (line[0] == '%' || bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("..."))) {
				return false
			}
			p.lines = append(p.lines, fastLine{indent: s - off, start: s, end: e})
		}
		off = eol + 1
	}
	return true
}

func (p *fastParser) count() bool {
	p.nodes++
	return p.nodes <= maxNodes
}

// block reads the map or list whose first line is the current one, at
// indent.
func (p *fastParser) block(indent, depth int) (any, bool) {
	if depth > fastMaxDepth || p.i >= len(p.lines) || !p.count() {
		return nil, false
	}
	l := p.lines[p.i]
	if l.indent != indent {
		return nil, false
	}
	if p.isItem(l) {
		return p.list(indent, depth)
	}
	return p.mapping(indent, depth)
}

func (p *fastParser) isItem(l fastLine) bool {
	return p.data[l.start] == '-' && (l.end-l.start == 1 || p.data[l.start+1] == ' ')
}

func (p *fastParser) mapping(indent, depth int) (any, bool) {
	m := map[string]any{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent || p.isItem(l) {
			return nil, false
		}
		key, rest, ok := p.key(l.start, l.end)
		if !ok {
			return nil, false
		}
		if _, dup := m[key]; dup || key == "<<" {
			return nil, false
		}
		p.i++
		v, ok := p.value(rest, l.end, indent, depth, true)
		if !ok {
			return nil, false
		}
		m[key] = v
	}
	return m, true
}

func (p *fastParser) list(indent, depth int) (any, bool) {
	var out []any
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent {
			return nil, false
		}
		if !p.isItem(l) {
			break // "key:\n- a\nnext: b": the list ends, its map goes on
		}
		s := l.start + 1
		for s < l.end && p.data[s] == ' ' {
			s++
		}
		if s < l.end && p.data[s] != '#' {
			if p.data[s] == '-' && (s+1 == l.end || p.data[s+1] == ' ') {
				return nil, false // a list in a list item: general path
			}
			if _, _, isKey := p.key(s, l.end); isKey {
				// A map that starts on the item's line: the rest of the
				// line is its first entry, at the column it starts at.
				p.lines[p.i] = fastLine{indent: s - (l.start - l.indent), start: s, end: l.end}
				if !p.count() || depth+1 > fastMaxDepth {
					return nil, false
				}
				v, ok := p.mapping(p.lines[p.i].indent, depth+1)
				if !ok {
					return nil, false
				}
				out = append(out, v)
				continue
			}
		}
		p.i++
		v, ok := p.value(s, l.end, indent, depth, false)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	if out == nil {
		out = []any{}
	}
	return out, true
}

// value reads what follows a key's colon or an item's dash: text from s to
// end on the owner's line, or, when that is empty, a block on the next
// lines. inMap allows a list at the owner's own indent ("key:\n- a").
func (p *fastParser) value(s, end, indent, depth int, inMap bool) (any, bool) {
	if s >= end || p.data[s] == '#' {
		if p.i < len(p.lines) {
			next := p.lines[p.i]
			if next.indent > indent || (inMap && next.indent == indent && p.isItem(next)) {
				return p.block(next.indent, depth+1)
			}
		}
		if !p.count() {
			return nil, false
		}
		return nil, true // an empty value is null
	}
	// Text on the line: the next line must not continue it.
	if p.i < len(p.lines) && p.lines[p.i].indent > indent {
		return nil, false
	}
	if !p.count() {
		return nil, false
	}
	var v any
	var ok bool
	switch p.data[s] {
	case '[', '{':
		v, s, ok = p.flow(s, end, depth+1)
	case '\'', '"':
		var str string
		str, s, ok = p.quoted(s, end)
		v = str
	default:
		e := plainEnd(p.data, s, end)
		if !plainStart(p.data, s, e, false) || bytes.Contains(p.data[s:e], []byte(": ")) || p.data[e-1] == ':' {
			return nil, false
		}
		v, ok = resolvePlain(string(p.data[s:e]))
		s = e
	}
	if !ok || !p.restIsComment(s, end) {
		return nil, false
	}
	return v, true
}

// key reads "key:" at s: a plain or quoted key followed by a colon and a
// space or the end of the line. It returns the key and where the value
// starts.
func (p *fastParser) key(s, end int) (string, int, bool) {
	d := p.data
	var k string
	var e int
	switch d[s] {
	case '\'', '"':
		var ok bool
		if k, e, ok = p.quoted(s, end); !ok {
			return "", 0, false
		}
		for e < end && d[e] == ' ' {
			e++
		}
		if e >= end || d[e] != ':' || (e+1 < end && d[e+1] != ' ') {
			return "", 0, false
		}
	default:
		e = s
		for e < end && !(d[e] == ':' && (e+1 == end || d[e+1] == ' ')) {
			if d[e] == '#' && d[e-1] == ' ' {
				return "", 0, false
			}
			e++
		}
		if e >= end {
			return "", 0, false
		}
		ke := e
		for ke > s && d[ke-1] == ' ' {
			ke--
		}
		if !plainStart(d, s, ke, false) {
			return "", 0, false
		}
		k = string(d[s:ke])
	}
	e++ // the colon
	for e < end && d[e] == ' ' {
		e++
	}
	return k, e, true
}

// restIsComment reports whether only spaces and a comment follow s.
func (p *fastParser) restIsComment(s, end int) bool {
	if s == end {
		return true
	}
	if p.data[s] != ' ' {
		return false
	}
	for s < end && p.data[s] == ' ' {
		s++
	}
	return s == end || p.data[s] == '#'
}

// quoted reads a one-line single- or double-quoted scalar without escapes
// (but with a doubled quote standing for one in single quotes).
func (p *fastParser) quoted(s, end int) (string, int, bool) {
	d := p.data
	q := d[s]
	var b []byte
	for i := s + 1; i < end; i++ {
		switch c := d[i]; {
		case c == '\\' && q == '"':
			return "", 0, false
		case c == q && q == '\'' && i+1 < end && d[i+1] == '\'':
			if b == nil {
				b = append([]byte{}, d[s+1:i]...)
			}
			b = append(b, '\'')
			i++
		case c == q:
			if b == nil {
				return string(d[s+1 : i]), i + 1, true
			}
			return string(b), i + 1, true
		default:
			if b != nil {
				b = append(b, c)
			}
		}
	}
	return "", 0, false
}

// flow reads a flow map or list that ends on the same line.
func (p *fastParser) flow(s, end, depth int) (any, int, bool) {
	d := p.data
	if depth > fastMaxDepth || !p.count() {
		return nil, 0, false
	}
	closing := byte(']')
	if d[s] == '{' {
		closing = '}'
	}
	s = skipSpaces(d, s+1, end)
	if s < end && d[s] == closing {
		if closing == '}' {
			return map[string]any{}, s + 1, true
		}
		return []any{}, s + 1, true
	}
	var list []any
	var m map[string]any
	if closing == '}' {
		m = map[string]any{}
	} else {
		list = []any{}
	}
	for {
		if s >= end {
			return nil, 0, false
		}
		if closing == '}' {
			var k string
			var ok bool
			if k, s, ok = p.flowScalarText(s, end, true); !ok {
				return nil, 0, false
			}
			if _, dup := m[k]; dup || k == "<<" {
				return nil, 0, false
			}
			// A colon, a space, then a value that is not empty.
			if s+1 >= end || d[s] != ':' || d[s+1] != ' ' {
				return nil, 0, false
			}
			s = skipSpaces(d, s+1, end)
			var v any
			if v, s, ok = p.flowNode(s, end, depth); !ok {
				return nil, 0, false
			}
			m[k] = v
		} else {
			v, e, ok := p.flowNode(s, end, depth)
			if !ok {
				return nil, 0, false
			}
			s = e
			list = append(list, v)
		}
		s = skipSpaces(d, s, end)
		if s >= end {
			return nil, 0, false
		}
		switch d[s] {
		case closing:
			if closing == '}' {
				return m, s + 1, true
			}
			return list, s + 1, true
		case ',':
			s = skipSpaces(d, s+1, end)
			if s < end && (d[s] == ',' || d[s] == ']' || d[s] == '}') {
				return nil, 0, false // empty or trailing entries: general path
			}
		default:
			return nil, 0, false
		}
	}
}

// flowNode reads one value inside a flow collection.
func (p *fastParser) flowNode(s, end, depth int) (any, int, bool) {
	if s >= end {
		return nil, 0, false
	}
	switch p.data[s] {
	case '[', '{':
		return p.flow(s, end, depth+1)
	case '\'', '"':
		if !p.count() {
			return nil, 0, false
		}
		str, e, ok := p.quoted(s, end)
		return str, e, ok
	}
	text, e, ok := p.flowScalarText(s, end, false)
	if !ok || !p.count() {
		return nil, 0, false
	}
	v, ok := resolvePlain(text)
	return v, e, ok
}

// flowScalarText reads a plain or quoted scalar inside a flow collection,
// up to a comma, a closing bracket or (for keys) ": ".
func (p *fastParser) flowScalarText(s, end int, isKey bool) (string, int, bool) {
	d := p.data
	if d[s] == '\'' || d[s] == '"' {
		str, e, ok := p.quoted(s, end)
		return str, skipSpaces(d, e, end), ok
	}
	e := s
	for e < end {
		c := d[e]
		if c == ',' || c == ']' || c == '}' {
			break
		}
		if c == '[' || c == '{' || c == '?' || (c == '#' && d[e-1] == ' ') {
			return "", 0, false
		}
		if c == ':' && (e+1 == end || d[e+1] == ' ' || d[e+1] == ',' || d[e+1] == ']' || d[e+1] == '}' || d[e+1] == '[' || d[e+1] == '{') {
			if !isKey || e+1 == end || d[e+1] != ' ' {
				return "", 0, false
			}
			break
		}
		e++
	}
	te := e
	for te > s && d[te-1] == ' ' {
		te--
	}
	if !plainStart(d, s, te, true) {
		return "", 0, false
	}
	return string(d[s:te]), e, true
}

func skipSpaces(d []byte, s, end int) int {
	for s < end && d[s] == ' ' {
		s++
	}
	return s
}

// plainEnd returns where a plain scalar that starts at s ends on its line:
// before " #" or at the end.
func plainEnd(d []byte, s, end int) int {
	for i := s + 1; i < end; i++ {
		if d[i] == '#' && d[i-1] == ' ' {
			end = i
			break
		}
	}
	for end > s && d[end-1] == ' ' {
		end--
	}
	return end
}

// plainStart reports whether d[s:e] may be a plain scalar as a whole: not
// empty, not starting with an indicator.
func plainStart(d []byte, s, e int, inFlow bool) bool {
	if s >= e {
		return false
	}
	switch d[s] {
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '?', ':':
		return false
	case '-':
		// "-x" is plain; "- " and "-" alone are not scalars.
		if s+1 >= e || d[s+1] == ' ' {
			return false
		}
		if inFlow && (d[s+1] == ',' || d[s+1] == ']' || d[s+1] == '}') {
			return false
		}
	}
	return true
}

// resolvePlain gives a plain scalar the value yaml.v3 resolves it to, as
// the converter stores it: nil, bool, json.Number or string. Scalars whose
// resolution needs yaml.v3's rarer rules (timestamps, bases, underscores,
// infinities) return ok=false.
func resolvePlain(s string) (any, bool) {
	switch s[0] {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		switch s {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		case "~", "null", "Null", "NULL":
			return nil, true
		}
		return s, true
	case '<':
		if s == "<<" {
			return nil, false
		}
		return s, true
	case '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return nil, false
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, false
			}
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
		}
		if mayBeNumber(s) {
			return nil, false
		}
		return s, true
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return resolveNumeric(s)
	}
	return s, true
}

// resolveNumeric handles plain scalars that start with a sign or a digit.
func resolveNumeric(s string) (any, bool) {
	switch s {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return nil, false
	}
	digits := s
	if s[0] == '+' || s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" {
		return s, true
	}
	allDigits := true
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			allDigits = false
			break
		}
	}
	if allDigits {
		if len(digits) > 1 && digits[0] == '0' {
			return nil, false // 1.1 octal and friends
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return json.Number(strconv.FormatInt(i, 10)), true
		}
		return nil, false
	}
	if isSimpleFloat(digits) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
	}
	if mayBeNumber(s) {
		return nil, false
	}
	return s, true
}

// isSimpleFloat matches d+.d* (no sign, no exponent).
func isSimpleFloat(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && !dot && i > 0:
			dot = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return dot
}

// mayBeNumber reports whether yaml.v3 might read s as something other than a
// string: a timestamp, a number in another base or with underscores or an
// exponent. Only strings with a letter or symbol that no such form has are
// surely strings; versions like 1.2.3 are too, as none of those forms has
// two dots.
func mayBeNumber(s string) bool {
	dots, digits := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '+', c == '-':
		case c == '.':
			dots++
		case c == '_', c == ':', c == ' ', c == 'x', c == 'X', c == 'o', c == 'O', c == 'b', c == 'B',
			c == 'e', c == 'E', c == 't', c == 'T', c == 'z', c == 'Z',
			c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return dots < 2 && digits > 0
}
