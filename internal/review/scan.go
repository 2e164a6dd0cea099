package review

import (
	"bytes"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// The Flux files that a change leaves alone still count: each of their
// Kustomizations is a component Flux may reconcile. A fleet of 10,000 apps
// has 10,000 of them, and parsing each as YAML would cost a review of one
// app most of its time, so the scan reads only the few fields the count
// needs, with the fast reader of internal/yamlx, and gives up on anything
// that reader does not read, which is then parsed (fleet.ScanObject).

// scanned are the fields, beside its identity, that an object of an
// unchanged Flux file is read for.
var scanned = [][]string{
	{"metadata", "labels", layout.LabelComponent},
	{"metadata", "annotations", artifactPathAnnotation},
	{"spec", "path"},
	{"spec", "sourceRef", "kind"},
	{"spec", "sourceRef", "name"},
	{"spec", "sourceRef", "namespace"},
	{"spec", "ref", "digest"},
}

// scanFluxFile reads an unchanged Flux file: each document's scanned
// fields (fleet.ScanObject), or the whole document when it is not of the
// form the scan reads. The file is not written again: its text is not
// kept.
func scanFluxFile(p string, b []byte) *fluxFile {
	for bytes.HasPrefix(b, []byte("#")) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			b = nil
			break
		}
		b = b[i+1:]
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	sep := []byte(fleet.DocumentSeparator)
	f := &fluxFile{docs: make([]fluxDoc, 0, bytes.Count(b, sep)+1)}
	for doc := range bytes.SplitSeq(b, sep) {
		o, ok := fleet.ScanObject(p, doc, scanned)
		f.docs = append(f.docs, fluxDoc{obj: object{Object: o}, ok: ok && o.Kind != ""})
	}
	return f
}
