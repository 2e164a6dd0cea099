package load

import (
	"regexp"
	"strings"

	"github.com/fleetwright/fleetwright/internal/hint"
)

var (
	dns1035Label = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	Dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Sub   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	EnvName      = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)
	SecretKey    = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	WildcardHost = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
)

// CheckLabel returns why s is not a DNS-1035 label, or "".
func CheckLabel(s string, max int) string {
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

// CheckNamespace returns why s is not a DNS-1123 label, or "".
func CheckNamespace(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > 63:
		return "must be at most 63 characters long"
	case !Dns1123Label.MatchString(s):
		return "must consist of lowercase letters, digits and '-', and start and end with a letter or digit (a DNS-1123 label)"
	}
	return ""
}

// MaxReleaseName is the longest Helm release name (Helm refuses longer
// ones, and Flux's HelmRelease schema caps spec.releaseName at it).
const MaxReleaseName = 53

// CheckHostLength returns why a host name is too long for DNS, or "": a
// label holds at most 63 characters, a name 253.
func CheckHostLength(host string) string {
	if len(host) > 253 {
		return "is " + itoa(len(host)) + " characters long; DNS allows 253"
	}
	for label := range strings.SplitSeq(host, ".") {
		if len(label) > 63 {
			return "has a label of " + itoa(len(label)) + " characters (" + label + "); DNS allows 63"
		}
	}
	return ""
}

// IsSubdomain reports whether s is a DNS subdomain (RFC 1123), as
// Kubernetes names most objects.
func IsSubdomain(s string) bool { return len(s) <= 253 && dns1123Sub.MatchString(s) }

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

// suggest returns the candidate closest to s when it is close enough to be a
// likely typo, else "".
func suggest(s string, candidates []string) string { return hint.Suggest(s, candidates) }
