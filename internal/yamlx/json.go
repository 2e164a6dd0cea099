package yamlx

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// FormatFloat writes f as encoding/json does.
func FormatFloat(f float64) string {
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	b := strconv.AppendFloat(nil, f, fmtc, -1, 64)
	if fmtc == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b)
}

// AppendJSON appends n as JSON; a nil node is null.
func AppendJSON(b []byte, n *Node) []byte {
	switch {
	case n == nil:
		b = append(b, "null"...)
	case n.Kind == MapNode:
		b = append(b, '{')
		for i := 0; i < len(n.Kids); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONString(b, n.Kids[i].Str)
			b = append(b, ':')
			b = AppendJSON(b, n.Kids[i+1])
		}
		b = append(b, '}')
	case n.Kind == SeqNode:
		b = append(b, '[')
		for i, k := range n.Kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSON(b, k)
		}
		b = append(b, ']')
	default:
		switch n.Tag {
		case NullTag:
			b = append(b, "null"...)
		case IntTag, FloatTag, BoolTag:
			b = append(b, n.Str...)
		default:
			b = AppendJSONString(b, n.Str)
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string (without encoding/json's
// escapes of <, > and &).
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
