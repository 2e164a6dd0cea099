package review

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// maxInvalid bounds the problems an invalid comment lists.
const maxInvalid = 200

// Invalid is the comment for a head whose specs are invalid: nothing can be
// rendered, so it lists the problems (at most maxInvalid) instead.
func Invalid(ps spec.Problems) string {
	var b strings.Builder
	b.WriteString(Marker + "\n## fleetwright: the specs are invalid\n\nNothing can be rendered until these are fixed:\n\n```\n")
	for i, p := range ps {
		if i == maxInvalid {
			fmt.Fprintf(&b, "… and %d more\n", len(ps)-i)
			break
		}
		b.WriteString(p.Error() + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}
