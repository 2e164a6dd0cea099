package yamlx

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// plainStart reports whether s may be a plain scalar as a whole: not
// empty, not starting with an indicator.
func plainStart(s string, inFlow bool) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '?', ':':
		return false
	case '-':
		// "-x" is plain; "- " and "-" alone are not scalars.
		if len(s) == 1 || s[1] == ' ' {
			return false
		}
		if inFlow && (s[1] == ',' || s[1] == ']' || s[1] == '}') {
			return false
		}
	}
	return true
}

// oddRunes reports whether s holds a code point that YAML treats as a line
// break or reserves.
func oddRunes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.ContainsAny(s[i:], "\u0085\u2028\u2029\ufeff")
		}
	}
	return false
}

// resolvePlain types a plain scalar the way yaml.v3 does, and gives its
// canonical text. Scalars whose resolution needs yaml.v3's rarer rules
// (timestamps, bases, underscores, exponents, infinities, octals) return
// ok=false.
func resolvePlain(s string) (tag Tag, canon string, ok bool) {
	switch s[0] {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		switch s {
		case "true", "True", "TRUE":
			return BoolTag, "true", true
		case "false", "False", "FALSE":
			return BoolTag, "false", true
		case "~", "null", "Null", "NULL":
			return NullTag, "", true
		}
		return StrTag, s, true
	case '<':
		if s == "<<" {
			return 0, "", false
		}
		return StrTag, s, true
	case '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return 0, "", false
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return 0, "", false
			}
			return FloatTag, FormatFloat(f), true
		}
		if mayBeNumber(s) {
			return 0, "", false
		}
		return StrTag, s, true
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return resolveNumeric(s)
	}
	return StrTag, s, true
}

// resolveNumeric handles plain scalars that start with a sign or a digit.
func resolveNumeric(s string) (Tag, string, bool) {
	switch s {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return 0, "", false
	}
	digits := s
	if s[0] == '+' || s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" {
		return StrTag, s, true
	}
	allDigits := true
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			allDigits = false
			break
		}
	}
	if allDigits {
		if len(digits) > 1 && digits[0] == '0' {
			return 0, "", false // 1.1 octal and friends
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return IntTag, strconv.FormatInt(i, 10), true
		}
		return 0, "", false
	}
	if isSimpleFloat(digits) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, "", false
		}
		return FloatTag, FormatFloat(f), true
	}
	if mayBeNumber(s) {
		return 0, "", false
	}
	return StrTag, s, true
}

// isSimpleFloat matches d+.d* (no sign, no exponent).
func isSimpleFloat(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && !dot && i > 0:
			dot = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return dot
}

// mayBeNumber reports whether yaml.v3 might read s as something other than a
// string: a timestamp, a number in another base or with underscores or an
// exponent. Only strings with a letter or symbol that no such form has are
// surely strings (hex digits count only next to an x, so checksums are
// strings); versions like 1.2.3 are too, as none of those forms has two
// dots.
func mayBeNumber(s string) bool {
	hex := strings.ContainsAny(s, "xX")
	dots, digits := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '+', c == '-':
		case c == '.':
			dots++
		case c == '_', c == ':', c == ' ', c == 'x', c == 'X', c == 'o', c == 'O', c == 'b', c == 'B',
			c == 'e', c == 'E', c == 't', c == 'T', c == 'z', c == 'Z':
		case hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
		default:
			return false
		}
	}
	return dots < 2 && digits > 0
}

// quotedEnd returns the index of the closing quote of the quoted scalar
// that s starts with, or -1.
func quotedEnd(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i
		}
	}
	return -1
}

// unquote decodes a single-line quoted scalar, or reports false for
// escapes it does not know.
func unquote(q string) (string, bool) {
	body := q[1 : len(q)-1]
	if q[0] == '\'' {
		return strings.ReplaceAll(body, "''", "'"), true
	}
	if strings.IndexByte(body, '\\') < 0 {
		return body, true
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", false
		}
		switch body[i] {
		case '\\', '"':
			b.WriteByte(body[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'x', 'u', 'U':
			size := 2
			switch body[i] {
			case 'u':
				size = 4
			case 'U':
				size = 8
			}
			if i+1+size > len(body) {
				return "", false
			}
			v, err := strconv.ParseUint(body[i+1:i+1+size], 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return "", false
			}
			b.WriteRune(rune(v))
			i += size
		default:
			return "", false
		}
	}
	return b.String(), true
}
