package specedit

import "github.com/fleetwright/fleetwright/internal/docpath"

// Path locates a value in a document: map keys (string), list indexes
// (int) and list items selected by their name field (ByName).
type Path = docpath.Path

// ByName selects the item of a list whose name field equals it, as
// components[api] selects the component named api.
type ByName = docpath.ByName

// ParsePath reads a path as docpath.Parse does.
func ParsePath(s string) (Path, error) { return docpath.Parse(s) }
