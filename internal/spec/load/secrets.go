package load

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/secretscan"
)

// The secret gate of render validate: what render would write to the fleet
// in plain text. The rules are package secretscan's, which verify applies
// to the fleet too.

// LiteralProblem says why a literal value holds a credential by its shape,
// and what to do instead (for a password in a URL, urlInstead, where a %s
// stands for the URL with $(THAT_VAR) as its password), or "".
func LiteralProblem(v, instead, urlInstead string) string {
	ms := secretscan.Find(v)
	if len(ms) == 0 {
		return ""
	}
	m := ms[0]
	if m.Kind == secretscan.URLPassword {
		// The match leaves out a user that holds the password; the hint
		// keeps its place, so that the URL written as it says stays one.
		user, redacted := m.User, m.Redacted()
		if user == "" && urlHasUser(v[m.Start:m.End]) {
			user, redacted = "<user>", m.Scheme+"://****:****@…"
		}
		if strings.Contains(urlInstead, "%s") {
			urlInstead = fmt.Sprintf(urlInstead, m.Scheme+"://"+user+":$(THAT_VAR)@…")
		}
		return fmt.Sprintf("holds %s (%s), which would be written to Git; %s", m.What, redacted, urlInstead)
	}
	return fmt.Sprintf("holds %s, which would be written to Git; %s", m.What, instead)
}

// urlHasUser reports whether scheme://user:password, as a match spans
// it, names a user.
func urlHasUser(s string) bool {
	_, rest, ok := strings.Cut(s, "://")
	return ok && !strings.HasPrefix(rest, ":")
}

// ContentSecret says why a config file's content holds a credential, or "".
func ContentSecret(content string) string {
	return LiteralProblem(content, "mount it from a Secret (volumes: [{name: …, mount_path: …, secret: {name: <secret>}}]) instead",
		"keep the file's credential in a Secret: mount the Secret as a volume, or take the password from env with $(THAT_VAR) if the program expands it, instead of %s")
}
