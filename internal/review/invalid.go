package review

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// maxInvalid bounds the problems an invalid comment lists.
const maxInvalid = 200

// Invalid is the comment for a head whose specs are invalid: nothing can be
// rendered, so it lists the problems (at most maxInvalid) instead.
func Invalid(ps load.Problems) string {
	var b strings.Builder
	var list strings.Builder
	for i, p := range ps {
		if i == maxInvalid {
			fmt.Fprintf(&list, "… and %d more\n", len(ps)-i)
			break
		}
		list.WriteString(p.Error() + "\n")
	}
	// The problems quote the specs: fenced keeps them in the block.
	b.WriteString(Marker + "\n## fleetwright: the specs are invalid\n\nNothing can be rendered until these are fixed:\n\n")
	b.WriteString(fenced("", list.String()))
	return b.String()
}
