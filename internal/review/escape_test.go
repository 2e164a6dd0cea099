package review

import (
	"strings"
	"testing"
	"unicode"
)

// codeSpan reads s as CommonMark reads a code span that is all of s: the
// opening backtick string, up to the first backtick string of the same
// length, which must end s; one space stripped from both ends when the
// content starts and ends with one and is not all spaces.
func codeSpan(s string) (string, bool) {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	if n == 0 {
		return "", false
	}
	for i := n; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			if j != len(s) {
				return "", false
			}
			c := s[n:i]
			if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
				c = c[1 : len(c)-1]
			}
			return c, true
		}
		i = j
	}
	return "", false
}

// unescapeCell takes the backslashes out of a table cell's "\|", as
// GitHub does before it reads the cell's inlines.
func unescapeCell(s string) string { return strings.ReplaceAll(s, `\|`, "|") }

// unescapeMD reads md's output back: backslash escapes and the three
// entities it writes.
func unescapeMD(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], "&lt;"):
			b.WriteByte('<')
			i += 3
		case strings.HasPrefix(s[i:], "&gt;"):
			b.WriteByte('>')
			i += 3
		case strings.HasPrefix(s[i:], "&amp;"):
			b.WriteByte('&')
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// oneLine fails when s holds a line break or another control character.
func oneLine(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r) {
			t.Fatalf("%s holds %U: %q", what, r, s)
		}
	}
}

// barePipe reports the first pipe that ends a table cell on GitHub: one
// that no backslash comes right before (GitHub's table reader takes every
// "\|" as a pipe in the cell, whatever comes before the backslash).
func barePipe(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '|' && (i == 0 || s[i-1] != '\\') {
			return i
		}
	}
	return -1
}

// FuzzEscape: every helper's output is one line; md's and html's hold no
// raw "<" and md's no bare "|"; cellCode's no bare "|"; code's and
// cellCode's read back, as CommonMark (and GitHub, in a table cell) reads
// a code span, as the folded value; md's as the folded value.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"myorg/api:1.0", "`\n\n<!--", "a|b", "``x``", " `", "` ", "  ", " a ", "\\|", "a\\", "<b>&amp;</b>", "\r\n\x00\x1b\u202e\u2028", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := fold(s)
		oneLine(t, "fold", want)
		for what, out := range map[string]string{"code": code(s), "cellCode": cellCode(s), "md": md(s), "html": html(s)} {
			oneLine(t, what, out)
		}
		if m := md(s); strings.Contains(m, "<") || barePipe(m) >= 0 || unescapeMD(m) != want {
			t.Fatalf("md(%q) = %q, reads back as %q", s, m, unescapeMD(m))
		}
		if h := html(s); strings.ContainsAny(h, "<>") {
			t.Fatalf("html(%q) = %q", s, h)
		}
		if want == "" {
			if code(s) != "" {
				t.Fatalf("code(%q) = %q, want nothing", s, code(s))
			}
			return
		}
		if got, ok := codeSpan(code(s)); !ok || got != want {
			t.Fatalf("code(%q) = %q, read as %q (a span: %v), want %q", s, code(s), got, ok, want)
		}
		c := cellCode(s)
		if barePipe(c) >= 0 {
			t.Fatalf("cellCode(%q) = %q holds a bare pipe", s, c)
		}
		if got, ok := codeSpan(unescapeCell(c)); !ok || got != want {
			t.Fatalf("cellCode(%q) = %q, read as %q (a span: %v), want %q", s, c, got, ok, want)
		}
	})
}

func TestEscape(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, code, cell, md string }{
		{"shop/store-api", "`shop/store-api`", "`shop/store-api`", "shop/store-api"},
		{"a`b", "``a`b``", "``a`b``", "a\\`b"},
		{"`\n\n<!--", "`` `  <!-- ``", "`` `  <!-- ``", "\\`  &lt;!--"},
		{"x|y", "`x|y`", "`x\\|y`", "x\\|y"},
		{" a ", "`  a  `", "`  a  `", " a "},
		{"  ", "`  `", "`  `", "  "},
		{"a\x00\x1b\u202eb", "`ab`", "`ab`", "ab"},
	} {
		if got := code(tt.in); got != tt.code {
			t.Errorf("code(%q) = %q, want %q", tt.in, got, tt.code)
		}
		if got := cellCode(tt.in); got != tt.cell {
			t.Errorf("cellCode(%q) = %q, want %q", tt.in, got, tt.cell)
		}
		if got := md(tt.in); got != tt.md {
			t.Errorf("md(%q) = %q, want %q", tt.in, got, tt.md)
		}
	}
}

func TestMermaidLabel(t *testing.T) {
	t.Parallel()
	got := mermaid("a\n```\n\"b\" <i>#1</i>`")
	if want := "a #96;#96;#96; 'b' #lt;i#gt;#35;1#lt;/i#gt;#96;"; got != want {
		t.Errorf("mermaid = %q, want %q", got, want)
	}
}
