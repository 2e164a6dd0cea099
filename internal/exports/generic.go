package exports

import (
	"errors"
	"fmt"
	"strings"
)

// token is a piece of text in Kubernetes expansion syntax: literal text or a
// $(name) reference.
type token struct {
	text  string // literal text (unescaped) or the referenced name
	isRef bool
}

// parseExpansion splits s as Kubernetes expands env values: "$$" is a
// literal "$", "$(name)" a reference, and any other "$" (including an
// unclosed "$(") is literal.
func parseExpansion(s string) []token {
	var out []token
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, token{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			lit.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			lit.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				lit.WriteString(s[i:])
				i = len(s)
				continue
			}
			flush()
			out = append(out, token{text: s[i+2 : i+2+end], isRef: true})
			i += 2 + end
		default:
			lit.WriteByte('$')
		}
	}
	flush()
	return out
}

// validDeclaredKey reports whether key can name a declared export and be
// referenced as $(key).
func validDeclaredKey(key string) bool {
	if key == "" || len(key) > 63 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// partName turns an export key into a part name: upper case, with every
// character other than a letter, digit or underscore replaced by "_".
func partName(key string) string {
	b := []byte(strings.ToUpper(key))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// resolveGeneric turns the declared exports of a generic addon into exports.
func resolveGeneric(decl []Declared) (*result, error) {
	r := &result{exports: map[string]Export{}}
	var errs []error
	seen := map[string]bool{}
	parsed := map[string][]token{}
	for _, d := range decl {
		if !validDeclaredKey(d.Key) {
			errs = append(errs, fmt.Errorf("declared export key %q: use letters, digits, '_', '-' or '.' (at most 63)", d.Key))
			continue
		}
		if seen[d.Key] {
			errs = append(errs, fmt.Errorf("declared export %q: declared twice", d.Key))
			continue
		}
		seen[d.Key] = true
		if d.Secret != nil {
			if d.Value != "" {
				errs = append(errs, fmt.Errorf("declared export %q: set either a value or a secret, not both", d.Key))
				continue
			}
			ref, err := secretRef(d.Secret.Name, d.Secret.Key, "secret_ref.key")
			if err != nil {
				errs = append(errs, fmt.Errorf("declared export %q: %w", d.Key, err))
				continue
			}
			r.add(Export{Key: d.Key, Kind: Secret, Sensitive: true, Secret: ref, Description: d.Description})
			continue
		}
		toks := parseExpansion(d.Value)
		if hasRef(toks) {
			parsed[d.Key] = toks
			continue
		}
		r.add(Export{Key: d.Key, Kind: Plain, Value: literal(toks), Description: d.Description})
	}
	// Exports that refer to others, built once every referable export is known.
	for _, d := range decl {
		toks, ok := parsed[d.Key]
		if !ok {
			continue
		}
		e, err := compose(d, toks, r.exports, parsed)
		if err != nil {
			errs = append(errs, fmt.Errorf("declared export %q: %w", d.Key, err))
			continue
		}
		r.add(e)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func hasRef(toks []token) bool {
	for _, t := range toks {
		if t.isRef {
			return true
		}
	}
	return false
}

func literal(toks []token) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
	}
	return b.String()
}

// compose builds the export of a declared value that refers to other
// exports: plain ones are inlined, secret ones become parts.
func compose(d Declared, toks []token, base map[string]Export, composed map[string][]token) (Export, error) {
	var tmpl, plain strings.Builder
	var parts []Part
	partOf := map[string]string{} // key → part name
	owner := map[string]string{}  // part name → key
	for _, t := range toks {
		if !t.isRef {
			tmpl.WriteString(escapeDollar(t.text))
			plain.WriteString(t.text)
			continue
		}
		ref, ok := base[t.text]
		switch {
		case t.text == d.Key:
			return Export{}, fmt.Errorf("$(%s) refers to itself", t.text)
		case composed[t.text] != nil:
			return Export{}, fmt.Errorf("$(%s) refers to an export that itself refers to others", t.text)
		case !ok:
			return Export{}, fmt.Errorf("$(%s) is not a declared export (write $$ for a literal $)", t.text)
		}
		if ref.Kind == Plain {
			tmpl.WriteString(escapeDollar(ref.Value))
			plain.WriteString(ref.Value)
			continue
		}
		name, done := partOf[t.text]
		if !done {
			name = partName(t.text)
			if other, clash := owner[name]; clash {
				return Export{}, fmt.Errorf("$(%s) and $(%s) would share the hidden variable suffix %s", other, t.text, name)
			}
			owner[name], partOf[t.text] = t.text, name
			s := *ref.Secret
			parts = append(parts, Part{Name: name, Secret: &s})
		}
		tmpl.WriteString("$(" + name + ")")
	}
	if len(parts) == 0 {
		return Export{Key: d.Key, Kind: Plain, Value: plain.String(), Description: d.Description}, nil
	}
	return Export{Key: d.Key, Kind: Composed, Sensitive: true, Parts: parts, Template: tmpl.String(), Description: d.Description}, nil
}
