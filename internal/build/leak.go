package build

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
)

// minScanLen is the shortest secret value searched for in layers: shorter
// ones would match by chance.
const minScanLen = 4

// base64Line is where the base64 tools (GNU, busybox) wrap their output.
const base64Line = 76

// secretEncodings are the forms of a value that are searched for in a
// RUN's layer and masked in its output besides the value itself: base64
// (standard and URL alphabets, at each of the three byte offsets the value
// can start at inside a longer encoded text, so without the first and last
// characters that depend on its neighbours; and each 76-character line of
// the encoding of a long value, as base64 tools wrap it), hex (lower and
// upper case)
// and URL encoding (query and path), each of the value and of the value
// without a trailing newline.
func secretEncodings(v []byte) [][]byte {
	var out [][]byte
	bases := [][]byte{v}
	if t := bytes.TrimRight(v, "\r\n"); len(t) != len(v) {
		bases = append(bases, t)
	}
	for _, b := range bases {
		if len(b) < minScanLen {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			for off := 0; off < 3; off++ {
				in := append(make([]byte, off), b...)
				s := enc.EncodeToString(in)
				start := (off*8 + 5) / 6      // first character made of the value's bits only
				end := (off + len(b)) * 8 / 6 // characters fully inside the value
				if end-start >= minScanLen {
					out = append(out, []byte(s[start:end]))
				}
				// base64 wraps its output at 76 columns: each full line of
				// a long value's encoding stands for part of it.
				for i := 0; off == 0 && len(s) > base64Line && i < len(s); i += base64Line {
					if line := s[i:min(i+base64Line, len(s))]; len(line) >= 8 {
						out = append(out, []byte(line))
					}
				}
			}
		}
		h := hex.EncodeToString(b)
		out = append(out, []byte(h), bytes.ToUpper([]byte(h)))
		for _, u := range []string{url.QueryEscape(string(b)), url.PathEscape(string(b))} {
			if u != string(b) {
				out = append(out, []byte(u))
			}
		}
	}
	return out
}

// allSecretForms is what stands for a secret: its plain forms (the value,
// without a trailing newline, each line of 4 bytes or more) and its
// encodings, longest first, each once.
func allSecretForms(v []byte) [][]byte {
	forms := append(secretForms(v), secretEncodings(v)...)
	slices.SortStableFunc(forms, func(a, b []byte) int { return len(b) - len(a) })
	return slices.CompactFunc(forms, bytes.Equal)
}

// leakScanner searches what is written to it for the forms of secret
// values, across writes: one file (or name) at a time.
type leakScanner struct {
	ids    []string // by form
	forms  [][]byte
	maxLen int
	carry  []byte // the end of what was written, raw
	flat   []byte // the end of what was written, without line breaks
	hit    int    // index of the form found, -1 for none
}

// newLeakScanner returns a scanner for the secrets, nil when there are
// none long enough to search for.
func newLeakScanner(ids []string, values [][]byte) *leakScanner {
	s := &leakScanner{hit: -1}
	for i, v := range values {
		if len(bytes.TrimRight(v, "\r\n")) < minScanLen {
			continue
		}
		for _, f := range allSecretForms(v) {
			if len(f) >= minScanLen {
				s.forms = append(s.forms, f)
				s.ids = append(s.ids, ids[i])
				s.maxLen = max(s.maxLen, len(f))
			}
		}
	}
	if len(s.forms) == 0 {
		return nil
	}
	return s
}

// reset starts a new file.
func (s *leakScanner) reset() {
	s.carry, s.flat, s.hit = s.carry[:0], s.flat[:0], -1
}

func (s *leakScanner) Write(p []byte) (int, error) {
	if s.hit >= 0 {
		return len(p), nil
	}
	s.carry = s.search(append(s.carry, p...))
	if s.hit < 0 {
		// A base64 tool wraps its lines: look again without line breaks.
		flat := s.flat
		for _, c := range p {
			if c != '\n' && c != '\r' {
				flat = append(flat, c)
			}
		}
		s.flat = s.search(flat)
	}
	return len(p), nil
}

// search looks for every form in buf and returns the tail of buf to keep
// for the next write.
func (s *leakScanner) search(buf []byte) []byte {
	for i, f := range s.forms {
		if bytes.Contains(buf, f) {
			s.hit = i
			break
		}
	}
	if keep := s.maxLen - 1; len(buf) > keep {
		buf = append(buf[:0], buf[len(buf)-keep:]...)
	}
	return buf
}

// check scans a whole string (a path, a link's target) on its own.
func (s *leakScanner) check(v string) int {
	s.reset()
	s.Write([]byte(v))
	return s.hit
}

// leakError is a secret's form found in a layer entry.
type leakError struct {
	id   string
	path string
}

func (e *leakError) Error() string {
	return fmt.Sprintf("%s holds the value of secret %q", e.path, e.id)
}

// SecretLeakError is a RUN whose layer holds the value of a secret it
// mounted, plain or encoded: the build stops and the layer is never
// pushed.
type SecretLeakError struct {
	File    string
	Line    int
	Command string
	Secret  string
	// Path is the layer entry that holds it (its content, name or link).
	Path string
}

func (e *SecretLeakError) Error() string {
	return fmt.Sprintf("%s:%d: RUN %s: the layer would hold the value of secret %q (in %s), plain or encoded; secrets must not be written to the image, so nothing is pushed", e.File, e.Line, e.Command, e.Secret, e.Path)
}
