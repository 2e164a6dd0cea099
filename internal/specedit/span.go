package specedit

import (
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// off turns a node's 1-based line and column (in characters) into a byte
// offset.
func (d *Doc) off(line, col int) int {
	if line < 1 {
		return 0
	}
	if line > len(d.lines) {
		return len(d.src)
	}
	o := d.lines[line-1]
	for i := 1; i < col && o < len(d.src) && d.src[o] != '\n'; i++ {
		_, size := utf8.DecodeRune(d.src[o:])
		o += size
	}
	return o
}

// lineOf returns the 1-based line holding byte offset o.
func (d *Doc) lineOf(o int) int {
	lo, hi := 0, len(d.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if d.lines[mid] <= o {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

func (d *Doc) lineEnd(o int) int {
	for o < len(d.src) && d.src[o] != '\n' {
		o++
	}
	return o
}

// lineAfter returns the start of the line after the one holding o when
// the rest of that line is blank or a comment; else o.
func (d *Doc) lineAfter(o int) int {
	e := d.lineEnd(o)
	rest := strings.TrimSpace(string(d.src[o:e]))
	if rest != "" && !(strings.HasPrefix(rest, "#") && !d.json) {
		return o
	}
	if e < len(d.src) {
		return e + 1
	}
	return e
}

// nodeStart is the offset of a node's own text, after any anchor or tag.
func (d *Doc) nodeStart(n *yaml.Node) int {
	o := d.off(n.Line, n.Column)
	for o < len(d.src) && (d.src[o] == '&' || d.src[o] == '!') && !d.json {
		for o < len(d.src) && !isSpace(d.src[o]) {
			o++
		}
		for o < len(d.src) && (d.src[o] == ' ' || d.src[o] == '\t') {
			o++
		}
	}
	return o
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// span returns the byte range of a node's text. flow tells whether the node
// sits in a flow collection; indent is the indentation of the block that
// holds it (its value goes on while lines are more indented).
func (d *Doc) span(n *yaml.Node, flow bool, indent int) (int, int) {
	start := d.nodeStart(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if implicitNull(n) {
			return start, start
		}
		switch {
		case n.Style&yaml.DoubleQuotedStyle != 0:
			return start, d.quotedEnd(start, '"')
		case n.Style&yaml.SingleQuotedStyle != 0:
			return start, d.quotedEnd(start, '\'')
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			return start, d.blockScalarEnd(start, indent)
		}
		return start, d.plainEnd(start, flow || d.json, indent)
	case yaml.AliasNode:
		e := start + 1
		for e < len(d.src) && !isSpace(d.src[e]) && !strings.ContainsRune(",]}", rune(d.src[e])) {
			e++
		}
		return start, e
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 || d.json || flow {
			return start, d.flowEnd(start)
		}
		if len(n.Content) == 0 {
			return start, start
		}
		if n.Kind == yaml.MappingNode {
			first := n.Content[0]
			return d.nodeStart(first), d.entryEnd(n, len(n.Content)/2-1, false, first.Column-1)
		}
		last := n.Content[len(n.Content)-1]
		_, e := d.span(last, false, n.Column-1)
		return d.off(n.Line, n.Column), e
	}
	return start, start
}

// entryEnd is the end of the text of pair i of map m: its value's end, or
// the colon after the key when the value is written as nothing.
func (d *Doc) entryEnd(m *yaml.Node, i int, flow bool, indent int) int {
	k, v := m.Content[2*i], m.Content[2*i+1]
	if implicitNull(v) {
		_, ke := d.span(k, flow, indent)
		o := ke
		for o < len(d.src) && (d.src[o] == ' ' || d.src[o] == '\t') {
			o++
		}
		if o < len(d.src) && d.src[o] == ':' {
			return o + 1
		}
		return ke
	}
	_, e := d.span(v, flow, indent)
	return e
}

func (d *Doc) quotedEnd(start int, q byte) int {
	for i := start + 1; i < len(d.src); i++ {
		switch {
		case q == '"' && d.src[i] == '\\':
			i++
		case d.src[i] == q:
			if q == '\'' && i+1 < len(d.src) && d.src[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(d.src)
}

// plainEnd finds the end of a plain scalar: the end of its line (before a
// comment, a ": " or, in flow context, a flow indicator), extended over
// more-indented continuation lines in block context.
func (d *Doc) plainEnd(start int, flow bool, indent int) int {
	end := d.plainLineEnd(start, flow)
	if flow {
		return end
	}
	// The scalar stopped before a comment or at the line's end: only then
	// can it continue on the next lines.
	if rest := strings.TrimSpace(string(d.src[end:d.lineEnd(end)])); rest != "" {
		return end
	}
	line := d.lineOf(start)
	for l := line + 1; l <= len(d.lines); l++ {
		ls := d.lines[l-1]
		le := d.lineEnd(ls)
		text := string(d.src[ls:le])
		trimmed := strings.TrimSpace(text)
		if trimmed == "" {
			continue
		}
		lead := len(text) - len(strings.TrimLeft(text, " "))
		if lead <= indent || strings.HasPrefix(trimmed, "#") {
			break
		}
		end = d.plainLineEnd(ls+lead, false)
		if rest := strings.TrimSpace(string(d.src[end:le])); rest != "" {
			break
		}
	}
	return end
}

func (d *Doc) plainLineEnd(start int, flow bool) int {
	i := start
	for i < len(d.src) {
		c := d.src[i]
		if c == '\n' || c == '\r' {
			break
		}
		if c == '#' && i > start && (d.src[i-1] == ' ' || d.src[i-1] == '\t') {
			break
		}
		if c == ':' && (i+1 >= len(d.src) || isSpace(d.src[i+1]) || flow && strings.ContainsRune(",[]{}", rune(d.src[i+1]))) {
			break
		}
		if flow && strings.ContainsRune(",[]{}", rune(c)) {
			break
		}
		i++
	}
	for i > start && (d.src[i-1] == ' ' || d.src[i-1] == '\t') {
		i--
	}
	return i
}

// blockScalarEnd finds the end of a literal (|) or folded (>) scalar: its
// last content line more indented than the block holding it.
func (d *Doc) blockScalarEnd(start, indent int) int {
	end := d.lineEnd(start)
	// The header may carry a comment; the content starts on the next line.
	for l := d.lineOf(start) + 1; l <= len(d.lines); l++ {
		ls := d.lines[l-1]
		le := d.lineEnd(ls)
		text := string(d.src[ls:le])
		if strings.TrimSpace(text) == "" {
			continue
		}
		lead := len(text) - len(strings.TrimLeft(text, " "))
		if lead <= indent {
			break
		}
		end = le
	}
	return end
}

// flowEnd finds the bracket that closes the flow collection opening at
// start, skipping quoted scalars and comments.
func (d *Doc) flowEnd(start int) int {
	depth := 0
	tokenStart := true // a quote opens a scalar only where a token starts
	for i := start; i < len(d.src); i++ {
		c := d.src[i]
		switch {
		case c == '{' || c == '[':
			depth++
			tokenStart = true
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			tokenStart = false
		case c == ',' || c == ':':
			tokenStart = true
		case c == '"' && tokenStart:
			i = d.quotedEnd(i, '"') - 1
			tokenStart = false
		case c == '\'' && tokenStart && !d.json:
			i = d.quotedEnd(i, '\'') - 1
			tokenStart = false
		case c == '#' && !d.json && i > 0 && isSpace(d.src[i-1]):
			i = d.lineEnd(i) - 1
		case isSpace(c):
		default:
			tokenStart = false
		}
	}
	return len(d.src)
}
