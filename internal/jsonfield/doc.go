// Package jsonfield is the one table of encoding/json's struct field rules
// that fleetwright's reflection walkers share: which fields a struct type
// has in JSON, under which names (json tags, "-" and "-,"), with which
// options (omitempty, omitzero, string), and how embedded structs are
// flattened, including which of two fields of the same name wins. The
// manifest encoder, the spec decoder and verify's validator all read it
// instead of each parsing the tags, so they cannot disagree with each
// other or with encoding/json.
//
// Of computes the table once per type and keeps it; it is safe for
// concurrent use.
package jsonfield
