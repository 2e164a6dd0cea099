// Package hint finds the name a user probably meant: "did you mean" for
// unknown fields, components, apps and parameters.
package hint

import (
	"math/big"
	"strconv"
	"strings"
)

// Suggest returns the candidate closest to s when it is close enough to be a
// likely typo, else "".
func Suggest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(ls, lc)
		if d < bestD && isClose(ls, lc, d) {
			best, bestD = c, d
		}
	}
	return best
}

// isClose says whether b is a likely meaning of a, d edits away: few edits
// for the words' length (one for a short word, a third of a long one, never
// all its letters), or one word inside the other when it is at least half
// of it and four letters long (health for health_check, not env for
// env_from).
func isClose(a, b string, d int) bool {
	short, long := min(len(a), len(b)), max(len(a), len(b))
	if d <= max(1, short/3) && d < short {
		return true
	}
	return short >= 4 && 2*short >= long && (strings.Contains(a, b) || strings.Contains(b, a))
}

// Distance is the optimal-string-alignment edit distance (a swap of two
// neighbours counts as one edit).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// TypeName names a JSON Schema type (or "a or b") in words: "a map", "a
// list", "a whole number", "empty".
func TypeName(t string) string {
	switch t {
	case "object":
		return "a map"
	case "array":
		return "a list"
	case "null":
		return "empty"
	case "integer":
		return "a whole number"
	case "string", "number", "boolean":
		return "a " + t
	}
	return t
}

// Number writes a schema bound or value: whole numbers exactly, others as
// the nearest float; "?" for none.
func Number(v *big.Rat) string {
	if v == nil {
		return "?"
	}
	if v.IsInt() {
		return v.RatString()
	}
	f, _ := v.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
