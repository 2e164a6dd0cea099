package validate

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// posixName is the shape of the variables shells and most programs use.
var posixName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnvRefs checks the $(NAME) references of literal values: each names
// an earlier entry of the same list. A name no entry has is an error when
// it has the shape of a variable (DB_HOST), a warning when it is only a
// valid Kubernetes name (not-a-ref), and text otherwise ($(date +%s)).
func checkEnvRefs(doc *load.Document, env []spec.EnvVar, container load.Path, inherited []spec.EnvVar, ps *load.Problems) {
	if !slices.ContainsFunc(env, func(e spec.EnvVar) bool { return e.Value != nil && strings.Contains(*e.Value, "$(") }) {
		return
	}
	at := container.Child("env")
	index := map[string]int{}
	for _, e := range inherited {
		index[e.Name] = -1 // the app's entries come before the container's own
	}
	for i, e := range env {
		if _, dup := index[e.Name]; !dup && e.Name != "" {
			index[e.Name] = i
		}
	}
	for i, e := range env {
		if e.Value == nil {
			continue
		}
		for _, ref := range envRefs(*e.Value) {
			j, ok := index[ref]
			switch {
			case !ok && posixName.MatchString(ref):
				ps.Add(doc, at.Child(i).Child("value"), "$(%s) names no env entry of this container; Kubernetes expands only earlier entries: add %s before this one, or write $$(%s) for a literal $(%s)", ref, ref, ref, ref)
			case !ok && load.EnvName.MatchString(ref):
				// Not the shape of a variable a shell could name: more
				// likely text than a reference, so a warning.
				ps.Warn(doc, at.Child(i).Child("value"), "$(%s) names no env entry of this container and stays as it is; write $$(%s) to say it is literal text", ref, ref)
			case j == i:
				ps.Add(doc, at.Child(i).Child("value"), "$(%s) names this entry itself; write $$(%s) for a literal $(%s)", ref, ref, ref)
			case j > i:
				ps.Add(doc, at.Child(i).Child("value"), "$(%s) names env[%d], which comes after this one; Kubernetes expands only earlier entries: move %s up", ref, j, ref)
			}
		}
	}
}

// envRefs returns the names that a value's $(NAME) references name, as
// Kubernetes expands them: $$ is a literal $, and $( without a closing )
// is left as it is.
func envRefs(v string) []string {
	var out []string
	for i := 0; i < len(v); i++ {
		if v[i] != '$' || i+1 >= len(v) {
			continue
		}
		switch v[i+1] {
		case '$':
			i++
		case '(':
			end := strings.IndexByte(v[i+2:], ')')
			if end < 0 {
				return out
			}
			out = append(out, v[i+2:i+2+end])
			i += 2 + end
		}
	}
	return out
}

// checkEnvFrom checks env_from entries: one of config_map and secret each.
func checkEnvFrom(doc *load.Document, list []spec.EnvFrom, at load.Path, ps *load.Problems) {
	for i, e := range list {
		ea := at.Child(i)
		switch {
		case e.ConfigMap == "" && e.Secret == "":
			ps.Add(doc, ea, "needs one of config_map or secret")
		case e.ConfigMap != "" && e.Secret != "":
			ps.Add(doc, ea, "takes one of config_map or secret, not both; list them as two entries")
		case e.ConfigMap != "" && !load.IsSubdomain(e.ConfigMap):
			ps.Add(doc, ea.Child("config_map"), "%q is not a valid ConfigMap name", e.ConfigMap)
		case e.Secret != "" && !load.IsSubdomain(e.Secret):
			ps.Add(doc, ea.Child("secret"), "%q is not a valid Secret name", e.Secret)
		}
		if e.Prefix != "" && !load.EnvName.MatchString(e.Prefix) {
			ps.Add(doc, ea.Child("prefix"), "%q cannot start an environment variable name", e.Prefix)
		}
	}
}
