package review

import (
	"slices"
	"strings"
)

// The Flux files that a change leaves alone still count: each of their
// Kustomizations is a component Flux may reconcile. A fleet of 10,000 apps
// has 10,000 of them, and parsing each as YAML would cost a review of one
// app most of its time, so scanFields reads the few fields the count needs
// from the text render writes (block mappings and sequences, plain
// scalars), and gives up on anything else, which is then parsed.

// scanned are the fields an object of an unchanged Flux file is read for.
var scanned = [][]string{
	{"apiVersion"},
	{"kind"},
	{"metadata", "name"},
	{"metadata", "namespace"},
	{"metadata", "labels", "fleetwright.io/component"},
	{"metadata", "annotations", artifactPathAnnotation},
	{"spec", "path"},
	{"spec", "sourceRef", "kind"},
	{"spec", "sourceRef", "name"},
	{"spec", "sourceRef", "namespace"},
	{"spec", "ref", "digest"},
}

// scanLevel is an open key of the text scanFields reads (its value on
// the lines below), or a list item's marker (key "-").
type scanLevel struct {
	indent int
	key    string
	open   bool
	// child is the indent of the level's keys (or of its items when seq),
	// -1 before the first: YAML wants them all the same.
	child int
	seq   bool
	keys  int // where its keys start in the keys buffer
}

// scanFields reads the scanned fields of one YAML document into a map as
// value would give them; ok is false when the text is not of the simple
// form it reads.
func scanFields(text string) (obj map[string]any, ok bool) {
	var buf [16]scanLevel
	stack := append(buf[:0], scanLevel{indent: -1, child: -1, open: true}) // the document
	var keysBuf [64]string
	keys := keysBuf[:0] // the keys of every level on the stack, in order: YAML wants each once
	pop := func() {
		keys = keys[:stack[len(stack)-1].keys]
		stack = stack[:len(stack)-1]
	}
	// under checks that a line at indent i may be a child of the top.
	under := func(i int, item bool) bool {
		l := &stack[len(stack)-1]
		if l.child == -1 {
			if i < l.indent || i == l.indent && !item || !l.open {
				return false
			}
			l.child, l.seq = i, item
			return true
		}
		return l.child == i && l.seq == item
	}
	scalarAt := -1 // indent of the last line's scalar: nothing may nest under it
	for line := range strings.SplitSeq(text, "\n") {
		rest := strings.TrimLeft(line, " ")
		if rest == "" || rest[0] == '#' {
			continue
		}
		i := len(line) - len(rest)
		if strings.IndexByte(rest, '\t') >= 0 || strings.IndexByte(rest, '\r') >= 0 || rest[len(rest)-1] == ' ' {
			return nil, false
		}
		if scalarAt >= 0 && i > scalarAt {
			return nil, false // a continuation of a scalar, or a mapping under one
		}
		scalarAt = -1
		item := rest == "-" || strings.HasPrefix(rest, "- ")
		for len(stack) > 1 {
			t := stack[len(stack)-1]
			if t.indent > i || t.indent == i && !(item && t.open) {
				pop()
				continue
			}
			break
		}
		if item {
			if len(stack) == 1 || !under(i, true) {
				return nil, false
			}
			stack = append(stack, scanLevel{indent: i + 1, key: "-", child: -1, keys: len(keys)})
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "-"), " ")
			i += 2
			if rest == "" {
				stack[len(stack)-1].open = true
				continue
			}
			// The item's first key is a child of its marker.
			stack[len(stack)-1].open = true
			if !strings.Contains(rest, ": ") && !strings.HasSuffix(rest, ":") {
				if !plainSafe(rest) {
					return nil, false
				}
				stack[len(stack)-1].open = false
				scalarAt = i - 2
				continue
			}
		}
		key, value, found := strings.Cut(rest, ": ")
		if !found {
			if !strings.HasSuffix(rest, ":") {
				return nil, false
			}
			key, value = strings.TrimSuffix(rest, ":"), ""
		}
		if !plainSafe(key) || strings.Contains(key, ": ") || strings.HasSuffix(key, ":") || !under(i, false) ||
			slices.Contains(keys[stack[len(stack)-1].keys:], key) {
			return nil, false
		}
		keys = append(keys, key)
		if value == "" {
			stack = append(stack, scanLevel{indent: i, key: key, open: true, child: -1, keys: len(keys)})
			continue
		}
		if !plainSafe(value) || strings.Contains(value, ": ") || strings.HasSuffix(value, ":") {
			return nil, false
		}
		scalarAt = i
		if f := scannedAt(stack[1:], key); f != nil {
			if !plainString(value) {
				return nil, false
			}
			if obj == nil {
				obj = map[string]any{}
			}
			set(obj, f, value)
		}
	}
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, true
}

// scannedAt returns the scanned field at the path of open keys and key,
// or nil.
func scannedAt(stack []scanLevel, key string) []string {
	if len(stack) > 2 {
		return nil
	}
	for _, f := range scanned {
		if len(f) != len(stack)+1 || f[len(f)-1] != key {
			continue
		}
		match := true
		for j := range stack {
			if stack[j].key != f[j] {
				match = false
				break
			}
		}
		if match {
			return f
		}
	}
	return nil
}

// unsafeByte marks the bytes a plain scalar that scanFields reads may not
// hold: indicators, quotes, flow and comment characters, control and
// non-ASCII bytes.
var unsafeByte = func() (t [256]bool) {
	for _, c := range "#\"'{}[],&*!|>%@`\\" {
		t[c] = true
	}
	for c := range 0x20 {
		t[c] = true
	}
	for c := 0x7f; c < 256; c++ {
		t[c] = true
	}
	return t
}()

// plainSafe reports whether s is a plain scalar that holds on one line and
// means its text: no indicator first, no comment, no quotes, no flow.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[0] == '-' || s[0] == '?' || s[0] == ':' || s[0] == '.' && strings.HasPrefix(s, "...") || s[0] == '<' && strings.HasPrefix(s, "<<") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if unsafeByte[s[i]] {
			return false
		}
	}
	return true
}

// plainString reports whether a plain scalar is a string (not a number,
// a bool, a null or a timestamp): conservatively, what starts with a
// digit, a sign or a dot and a digit is not.
func plainString(s string) bool {
	if s[0] >= '0' && s[0] <= '9' || s[0] == '+' || s[0] == '.' && len(s) > 1 && (s[1] >= '0' && s[1] <= '9' || s[1] == 'i' || s[1] == 'I' || s[1] == 'n' || s[1] == 'N') {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "null", "~", "yes", "no", "on", "off", "y", "n", "inf", "infinity", "nan":
		return false
	}
	return true
}

// scanFluxFile reads an unchanged Flux file: each document's scanned
// fields, or the whole document when it is not of the form scanFields
// reads.
func scanFluxFile(p string, b []byte) *fluxFile {
	s := string(b)
	for strings.HasPrefix(s, "#") {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			s = ""
			break
		}
		s = s[i+1:]
	}
	f := &fluxFile{}
	for text := range docsOf(strings.TrimSuffix(s, "\n")) {
		d := fluxDoc{}
		if m, ok := scanFields(text); ok {
			d.obj = object{File: p, Obj: m, Kind: str(m["kind"]), Name: str(get(m, "metadata", "name")), Namespace: str(get(m, "metadata", "namespace"))}
			d.ok = d.obj.Kind != ""
		} else {
			d.obj, d.ok = parseObject(p, text)
		}
		f.docs = append(f.docs, d)
	}
	return f
}

// docsOf splits a file's text at its "---" lines, as
// strings.SplitSeq(s, "\n---\n") does, line by line.
func docsOf(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i < len(s); {
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				break
			}
			next := i + j + 1
			if strings.HasPrefix(s[next:], "---\n") && next > 0 {
				if !yield(s[start : i+j]) {
					return
				}
				start = next + 4
				next = start
				if start > len(s) {
					start = len(s)
				}
			}
			i = next
		}
		yield(s[start:])
	}
}
