package secretscan

import (
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
)

// Kind is a family of credential shapes.
type Kind uint8

// Kinds of match.
const (
	Token       Kind = iota // a provider's token or key, recognised by its prefix
	PrivateKey              // a PEM private key, or one base64-encoded
	JWT                     // a JSON Web Token
	URLPassword             // a password in a URL's user information
)

// Match is a credential found in a text. It holds where the credential is
// and what it is, never its text.
type Match struct {
	Start, End int // the byte offsets of the credential in the text
	Kind       Kind
	// What names the credential for messages, such as "a GitHub token
	// (gh?_…)".
	What string
	// Scheme and User are the URL's scheme and user name, for URLPassword;
	// User is "" when it would give a credential away (it contains the
	// password, or is a token itself).
	Scheme, User string
}

// Redacted returns a URLPassword match's URL with the password masked:
// postgres://app:****@…
func (m Match) Redacted() string { return m.Scheme + "://" + m.User + ":****@…" }

// A token is a credential recognisable by a fixed prefix followed by a run
// of characters of a known set.
type token struct {
	prefixes []string
	chars    func(c byte) bool
	min, max int // length of the run after the prefix
	what     string
}

func alnum(c byte) bool     { return isLower(c) || isUpper(c) || isDigit(c) }
func upperNum(c byte) bool  { return isUpper(c) || isDigit(c) }
func wordChar(c byte) bool  { return alnum(c) || c == '_' }
func tokenChar(c byte) bool { return alnum(c) || c == '_' || c == '-' }
func b64url(c byte) bool    { return tokenChar(c) }

var tokens = []token{
	{prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, chars: alnum, min: 36, max: 36, what: "a GitHub token (gh?_…)"},
	{prefixes: []string{"github_pat_"}, chars: wordChar, min: 22, max: 1 << 10, what: "a GitHub fine-grained token (github_pat_…)"},
	{prefixes: []string{"glpat-"}, chars: tokenChar, min: 20, max: 1 << 10, what: "a GitLab token (glpat-…)"},
	{prefixes: []string{"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"}, chars: func(c byte) bool { return alnum(c) || c == '-' }, min: 10, max: 1 << 10, what: "a Slack token (xox?-…)"},
	{prefixes: []string{"AKIA", "ASIA"}, chars: upperNum, min: 16, max: 16, what: "an AWS access key id (AKIA…)"},
	{prefixes: []string{"sk_live_", "rk_live_"}, chars: alnum, min: 16, max: 1 << 10, what: "a Stripe live key (sk_live_…)"},
	{prefixes: []string{"AIza"}, chars: tokenChar, min: 35, max: 35, what: "a Google API key (AIza…)"},
	{prefixes: []string{"hooks.slack.com/services/T"}, chars: func(c byte) bool { return alnum(c) || c == '/' }, min: 20, max: 1 << 10, what: "a Slack webhook URL (hooks.slack.com/services/…)"},
}

var pemKey = regexp.MustCompile(`-----BEGIN ((RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`)

// pemBase64 is how "-----BEGIN" starts once base64-encoded.
const pemBase64 = "LS0tLS1CRUdJTi"

// Find returns the credentials in text, in order, none overlapping.
func Find(text string) []Match {
	var out []Match
	for _, tk := range tokens {
		for _, prefix := range tk.prefixes {
			for i := 0; ; {
				j := strings.Index(text[i:], prefix)
				if j < 0 {
					break
				}
				start := i + j
				i = start + len(prefix)
				if start > 0 && wordChar(text[start-1]) && !strings.HasPrefix(prefix, "hooks.") {
					continue
				}
				end := i
				for end < len(text) && tk.chars(text[end]) {
					end++
				}
				if n := end - i; n < tk.min || n > tk.max || end < len(text) && wordChar(text[end]) {
					continue
				}
				out = append(out, Match{Start: start, End: end, Kind: Token, What: tk.what})
				i = end
			}
		}
	}
	if strings.Contains(text, "PRIVATE KEY") {
		for _, loc := range pemKey.FindAllStringIndex(text, -1) {
			out = append(out, Match{Start: loc[0], End: loc[1], Kind: PrivateKey, What: "a PEM private key"})
		}
	}
	for i := 0; ; {
		j := strings.Index(text[i:], pemBase64)
		if j < 0 {
			break
		}
		start := i + j
		end := start
		for end < len(text) && (alnum(text[end]) || text[end] == '+' || text[end] == '/' || text[end] == '=') {
			end++
		}
		i = start + len(pemBase64)
		if head := text[start:min(end, start+64)]; len(head) >= 36 {
			dec, err := base64.StdEncoding.DecodeString(head[:len(head)/4*4])
			if err == nil && pemKey.Match(dec) {
				out = append(out, Match{Start: start, End: end, Kind: PrivateKey, What: "a base64-encoded PEM private key"})
				i = end
			}
		}
	}
	out = append(out, findJWTs(text)...)
	out = append(out, findAuthHeaders(text)...)
	out = append(out, findURLPasswords(text)...)
	slices.SortStableFunc(out, func(a, b Match) int { return a.Start - b.Start })
	// drop matches inside an earlier one (a token in a URL's password); a
	// URL whose user is a credential too does not show it
	kept := out[:0]
	for _, m := range out {
		if len(kept) > 0 && m.Start < kept[len(kept)-1].End {
			if prev := &kept[len(kept)-1]; prev.Kind == URLPassword {
				prev.User = ""
			}
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

// findJWTs finds eyJ….eyJ….signature: a JSON header and payload, base64url
// encoded, and a signature.
func findJWTs(text string) []Match {
	var out []Match
	run := func(at int) int { // end of the base64url run at at
		for at < len(text) && b64url(text[at]) {
			at++
		}
		return at
	}
	for i := 0; ; {
		j := strings.Index(text[i:], "eyJ")
		if j < 0 {
			return out
		}
		start := i + j
		i = start + 3
		if start > 0 && b64url(text[start-1]) {
			continue
		}
		e1 := run(start)
		if e1-start < 10 || e1+4 > len(text) || text[e1] != '.' || text[e1+1:e1+4] != "eyJ" {
			continue
		}
		e2 := run(e1 + 1)
		if e2-e1-1 < 10 || e2 >= len(text) || text[e2] != '.' {
			continue
		}
		e3 := run(e2 + 1)
		if e3-e2-1 < 16 || e3 < len(text) && text[e3] == '.' {
			continue
		}
		out = append(out, Match{Start: start, End: e3, Kind: JWT, What: "a JSON Web Token (eyJ…)"})
		i = e3
	}
}

// findAuthHeaders finds the credential of an HTTP Authorization header
// written out: "Authorization: Bearer …" or "Basic …".
func findAuthHeaders(text string) []Match {
	var out []Match
	for _, name := range []string{"uthorization:", "UTHORIZATION:"} {
		for i := 0; ; {
			j := strings.Index(text[i:], name)
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(name)
			if at == 0 || text[at-1] != 'A' && text[at-1] != 'a' {
				continue
			}
			k := i
			for k < len(text) && (text[k] == ' ' || text[k] == '"' || text[k] == '\'') {
				k++
			}
			scheme := ""
			for _, sch := range []string{"Bearer ", "bearer ", "BEARER ", "Basic ", "basic ", "BASIC "} {
				if strings.HasPrefix(text[k:], sch) {
					scheme = sch
				}
			}
			if scheme == "" {
				continue
			}
			start := k + len(scheme)
			end := start
			for end < len(text) && (tokenChar(text[end]) || strings.IndexByte("._~+/=", text[end]) >= 0) {
				end++
			}
			if end-start < 12 {
				continue // a reference ($TOKEN), a placeholder (<token>) or too short to be one
			}
			out = append(out, Match{Start: start, End: end, Kind: Token, What: "a credential in an Authorization header"})
			i = end
		}
	}
	return out
}

// findURLPasswords finds scheme://user:password@ with a password that is
// not a reference or a placeholder.
func findURLPasswords(text string) []Match {
	var out []Match
	for i := 0; ; {
		j := strings.Index(text[i:], "://")
		if j < 0 {
			return out
		}
		at := i + j
		i = at + 3
		s := at
		for s > 0 && (alnum(text[s-1]) || text[s-1] == '+' || text[s-1] == '.' || text[s-1] == '-') {
			s--
		}
		if s == at || !(isLower(text[s]) || isUpper(text[s])) {
			continue
		}
		e, colon := at+3, -1
		for ; e < len(text); e++ {
			c := text[e]
			if c == '@' || c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c <= ' ' {
				break
			}
			if c == ':' && colon < 0 {
				colon = e
			}
		}
		if e >= len(text) || text[e] != '@' || colon < 0 || colon == e-1 {
			continue
		}
		user, pass := text[at+3:colon], text[colon+1:e]
		if IsReference(pass) || placeholder(pass) {
			continue
		}
		if strings.Contains(user, pass) {
			user = ""
		}
		out = append(out, Match{Start: s, End: e, Kind: URLPassword, What: "a password in a " + text[s:at] + ":// URL",
			Scheme: text[s:at], User: user})
		i = e
	}
}

// placeholder reports whether a URL's password is a stand-in rather than a
// password: <password>, {{ … }}, ****, xxx.
func placeholder(p string) bool {
	if strings.HasPrefix(p, "<") && strings.HasSuffix(p, ">") || strings.HasPrefix(p, "{{") || strings.HasPrefix(p, "%") {
		return true
	}
	return strings.Trim(p, "*") == "" || strings.Trim(strings.ToLower(p), "x") == ""
}
