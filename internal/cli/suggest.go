package cli

import (
	"fmt"
	"strings"
)

// UnknownCommand is the usage error for a command name the program does
// not have, with the names close to it ("did you mean").
func (h *Help) UnknownCommand(name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := Suggest(name, h.Names()); len(s) > 0 {
		msg += "; did you mean " + strings.Join(quoteAll(s), " or ") + "?"
	}
	return Usagef("%s\nRun '%s help' for its commands.", msg, h.Program)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Suggest returns the candidates close to word: those it is a prefix of,
// and those at most two edits away (one for words of up to four letters),
// in the candidates' order.
func Suggest(word string, candidates []string) []string {
	word = strings.ToLower(word)
	limit := 2
	if len(word) <= 4 {
		limit = 1
	}
	var out []string
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if (len(word) >= 2 && strings.HasPrefix(lc, word)) || distance(word, lc) <= limit {
			out = append(out, c)
		}
	}
	return out
}

// distance is the Damerau–Levenshtein distance of a and b (optimal string
// alignment: insertions, deletions, substitutions and swaps of neighbours).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
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
