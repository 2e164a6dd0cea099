package spec

import (
	"regexp"
	"strings"
)

var (
	dns1035Label   = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Label   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Sub     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	envName        = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)
	secretKey      = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	wildcardHost   = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
	credentialName = regexp.MustCompile(`(?i)(PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH_?KEY|SIGNING_?KEY|CLIENT_?SECRET|_PWD$|^PWD_)`)
)

// checkLabel returns why s is not a DNS-1035 label, or "".
func checkLabel(s string, max int) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > max:
		return "must be at most " + itoa(max) + " characters long"
	case !dns1035Label.MatchString(s):
		return "must consist of lowercase letters, digits and '-', start with a letter and end with a letter or digit (a DNS-1035 label)"
	}
	return ""
}

// checkNamespace returns why s is not a DNS-1123 label, or "".
func checkNamespace(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 63:
		return "must be at most 63 characters long"
	case !dns1123Label.MatchString(s):
		return "must consist of lowercase letters, digits and '-', and start and end with a letter or digit (a DNS-1123 label)"
	}
	return ""
}

func isSubdomain(s string) bool { return len(s) <= 253 && dns1123Sub.MatchString(s) }

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// looksLikeCredential reports whether an env var name suggests a secret.
func looksLikeCredential(name string) bool { return credentialName.MatchString(name) }

// suggest returns the candidate closest to s when it is close enough to be a
// likely typo, else "".
func suggest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := distance(strings.ToLower(s), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len(s)/3)
	if bestD <= limit || (best != "" && (strings.Contains(best, s) || strings.Contains(s, best)) && len(s) >= 3) {
		return best
	}
	return ""
}

// distance is the optimal-string-alignment edit distance (a swap of two
// neighbours counts as one edit).
func distance(a, b string) int {
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

// LooksLikeCredential reports whether an env var name suggests a secret
// (PASSWORD, API_KEY, ..._TOKEN and the like).
func LooksLikeCredential(name string) bool { return looksLikeCredential(name) }
