package cli

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/hint"
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
		if (len(word) >= 2 && strings.HasPrefix(lc, word)) || hint.Distance(word, lc) <= limit {
			out = append(out, c)
		}
	}
	return out
}
