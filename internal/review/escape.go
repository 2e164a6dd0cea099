package review

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every value the comment shows that comes from a spec or a fleet file (a
// name, an image, a host, a path, a chart, a message that quotes one) goes
// through one of these, so that nothing a team commits can change the
// comment's structure: close a code span or a table cell, open an HTML
// comment that hides what follows, start a new line. GitHub renders the
// comment as GitHub Flavored Markdown (CommonMark with tables); each helper
// is right for one place:
//
//   - code: a code span in running text (the danger list, paragraphs);
//   - cellCode: a code span in a table cell;
//   - md: plain text, in running text or a table cell;
//   - html: text inside the HTML the comment writes itself (a <summary>).
//
// Each folds the value to one line first (fold).

// fold makes a value one line of printable text: line breaks (CR, LF,
// U+2028, U+2029, NEL) and tabs become a space, other control characters
// and bidirectional formatting characters are dropped, and bytes that are
// not UTF-8 become U+FFFD.
func fold(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\r' || r == '\n' || r == '\t' || r == '\u0085' || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// code is a value as a code span in running text: shown as it is, with
// nothing in it read as Markdown or HTML. The span's backtick string is
// one longer than the longest run of backticks in the value, and padded
// with a space on both sides when the value starts or ends with a
// backtick, or starts and ends with a space (CommonMark strips one space
// from both ends then). An empty value is an empty string.
func code(s string) string {
	s = fold(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	ticks := strings.Repeat("`", longest+1)
	pad := s[0] == '`' || s[len(s)-1] == '`' ||
		s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != ""
	if pad {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// cellCode is a value as a code span in a table cell: as code, with each
// pipe escaped. GitHub splits a table row at its unescaped pipes before it
// reads code spans, and takes the backslash out of "\|" in the cell.
func cellCode(s string) string {
	return strings.ReplaceAll(code(s), "|", `\|`)
}

// mdEscaper escapes the characters that start Markdown or HTML inline:
// emphasis, code spans, links, strikethrough, table cells, tags and
// entities. Block syntax needs no escape, since a value never starts a
// line.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `~`, `\~`, `|`, `\|`,
	`<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`,
)

// md is a value as plain text, in running text or a table cell.
func md(s string) string { return mdEscaper.Replace(fold(s)) }

var htmlEscaper = strings.NewReplacer(`&`, `&amp;`, `<`, `&lt;`, `>`, `&gt;`, `"`, `&#34;`, `'`, `&#39;`)

// html is a value as text inside the comment's own HTML.
func html(s string) string { return htmlEscaper.Replace(fold(s)) }

// fenced is text as a fenced code block with an info string: its fence
// one backtick longer than any run of backticks the text holds (three at
// least), so that no line of it closes the block, and on a line of its own.
func fenced(info, text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fence + info + "\n" + text + fence + "\n"
}

// codes joins values as code spans: "`a`, `b`".
func codes(l []string) string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}
