package review

import (
	"strings"
	"sync"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// The Flux files that a change leaves alone still count: each of their
// Kustomizations is a component Flux may reconcile. A fleet of 10,000 apps
// has 10,000 of them, and parsing each as YAML would cost a review of one
// app most of its time, so scanFields reads only the few fields the count
// needs, with the fast reader of internal/yamlx, and gives up on anything
// that reader does not read, which is then parsed.

// scanned are the fields an object of an unchanged Flux file is read for.
var scanned = [][]string{
	{"apiVersion"},
	{"kind"},
	{"metadata", "name"},
	{"metadata", "namespace"},
	{"metadata", "labels", layout.LabelComponent},
	{"metadata", "annotations", artifactPathAnnotation},
	{"spec", "path"},
	{"spec", "sourceRef", "kind"},
	{"spec", "sourceRef", "name"},
	{"spec", "sourceRef", "namespace"},
	{"spec", "ref", "digest"},
}

// fastReaders read the scanned documents with yamlx's fast reader,
// reusing its memory from one document to the next.
var fastReaders = sync.Pool{New: func() any { return new(yamlx.Reader) }}

// scanFields reads the scanned fields of one YAML document into a map as
// value would give them; ok is false when the fast reader does not read
// the text (the caller parses it then) or a scanned field is not a scalar.
// Only the scanned fields are turned into values: that is the saving over
// parseObject, which converts the whole document.
func scanFields(text string) (obj map[string]any, ok bool) {
	r := fastReaders.Get().(*yamlx.Reader)
	defer fastReaders.Put(r)
	docs, ok := r.Fast([]byte(text))
	if !ok || len(docs) != 1 || docs[0].Root == nil || docs[0].Root.Kind != yamlx.MapNode {
		return nil, false
	}
	obj = map[string]any{}
	for _, path := range scanned {
		n := docs[0].Root
		for _, k := range path {
			n = n.Get(k)
		}
		if n == nil {
			continue
		}
		if n.Kind != yamlx.ScalarNode {
			return nil, false
		}
		m := obj
		for _, k := range path[:len(path)-1] {
			next, _ := m[k].(map[string]any)
			if next == nil {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[path[len(path)-1]] = value(n)
	}
	return obj, true
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
