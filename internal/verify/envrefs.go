package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// Kubernetes expands $(NAME) in a container's env values when NAME is an
// env var defined earlier in the same container (or a Service's env var);
// $$(NAME) is the literal text $(NAME), and so is a $(NAME) that names
// nothing defined before it. render writes a spec's $(NAME) as it is when
// NAME is an earlier env entry and escapes every other $( as $$(.

var (
	// escapedRef is a value that is exactly an escaped reference.
	escapedRef = regexp.MustCompile(`^\$\$\(([A-Za-z_][A-Za-z0-9_]*)\)$`)
	// envRef finds the references of a value, escaped ones included.
	envRef = regexp.MustCompile(`\$+\(([A-Za-z_][A-Za-z0-9_]*)\)`)
)

// escapedPassword returns the NAME of a URL match whose password is the
// literal $$(NAME), escaped so that Kubernetes does not expand it.
func escapedPassword(text string, m secretscan.Match) (string, bool) {
	if m.Kind != secretscan.URLPassword || m.Start < 0 || m.End > len(text) {
		return "", false
	}
	u := text[m.Start:m.End]
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "", false
	}
	_, pass, ok := strings.Cut(rest, ":")
	if !ok {
		return "", false
	}
	if sm := escapedRef.FindStringSubmatch(pass); sm != nil {
		return sm[1], true
	}
	return "", false
}

// escapedMessage says that a URL's password is the literal text $(NAME).
func escapedMessage(m secretscan.Match, name string) string {
	return fmt.Sprintf("the password of this %s:// URL is the literal text $(%s), not the value of %s: $$( is not expanded. "+
		"To pass the value, set %s from a Secret (valueFrom.secretKeyRef; in app.yaml, an env entry with secret_ref) before this entry in the same container, and write $(%s)",
		m.Scheme, name, name, name, name)
}

// serviceEnv are the env vars Kubernetes sets for Services, which $(NAME)
// may name without the container defining them.
var serviceEnv = regexp.MustCompile(`_SERVICE_HOST$|_SERVICE_PORT(_[A-Z0-9_]+)?$|_PORT(_[0-9]+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)?$`)

// envRefFindings reports, for one container, the env values whose $(NAME)
// Kubernetes leaves as it is: NAME is not an env var defined before it
// (a warning: the program gets the text $(NAME)), and credential-named
// vars whose value is exactly an escaped reference $$(NAME).
func (r *run) envRefFindings(o *object, c container) []Finding {
	env := c.n.Get("env")
	if env == nil || env.Kind != yamlx.SeqNode {
		return nil
	}
	// env_from imports names verify cannot see: any may be defined.
	unknownNames := !c.n.Get("envFrom").IsNull() && len(items(c.n.Get("envFrom"))) > 0
	var out []Finding
	var defined []string
	for i, e := range env.Kids {
		name := e.Get("name").Text()
		v := e.Get("value")
		if v != nil && v.Kind == yamlx.ScalarNode && v.Tag == yamlx.StrTag {
			field := fmt.Sprintf("%s.env[%d].value", c.path, i)
			if sm := escapedRef.FindStringSubmatch(v.Str); sm != nil && secretscan.IsCredentialName(name) {
				out = append(out, r.finding(o, CheckSecret, SeverityWarning, field,
					fmt.Sprintf("env var %q is the literal text $(%s), not the value of %s: $$( is not expanded. "+
						"Set %s from a Secret (valueFrom.secretKeyRef) before this entry and write $(%s)", name, sm[1], sm[1], sm[1], sm[1])))
			}
			for _, ref := range envRef.FindAllStringSubmatch(v.Str, -1) {
				if strings.HasPrefix(ref[0], "$$") || unknownNames || slices.Contains(defined, ref[1]) || serviceEnv.MatchString(ref[1]) {
					continue
				}
				what := "no env var before it defines " + ref[1]
				if slices.Contains(envNames(env), ref[1]) {
					what = ref[1] + " is defined after it"
				}
				out = append(out, r.finding(o, CheckEnvRef, SeverityWarning, field,
					fmt.Sprintf("the reference to %s is not expanded: %s in container %q, and Kubernetes expands only env vars defined earlier in the same container, so the value keeps the reference as text",
						ref[1], what, c.n.Get("name").Text())))
			}
		}
		defined = append(defined, name)
	}
	return out
}

func envNames(env *node) []string {
	var out []string
	for _, e := range items(env) {
		out = append(out, e.Get("name").Text())
	}
	return out
}
