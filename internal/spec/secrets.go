package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/secretscan"
)

// The secret gate of render validate: what render would write to the fleet
// in plain text. The rules are package secretscan's, which verify applies
// to the fleet too.

// literalProblem says why a literal value holds a credential by its shape,
// and what to do instead (for a password in a URL, urlInstead, where a %s
// stands for the URL with $(THAT_VAR) as its password), or "".
func literalProblem(v, instead, urlInstead string) string {
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

// urlFromEnv is how a workload builds a URL with a password.
const urlFromEnv = "take the password from a Secret into an env var listed before this one with secret_ref, and write %s, or use export_ref"

const useSecretRef = "put it in a Secret and use secret_ref: {name: <secret>, key: <key>} instead"

// checkEnvSecret refuses an env var whose literal value is a credential:
// by its name, or by its shape.
func checkEnvSecret(doc *Document, at Path, e *EnvVar, ps *Problems) {
	if e.Value == nil || *e.Value == "" || secretscan.IsReference(*e.Value) {
		return
	}
	if secretscan.IsCredentialName(e.Name) {
		ps.Add(doc, at.Child("value"), "%q looks like a credential and its value would be written to Git; use secret_ref: {name: <secret>, key: <key>} instead", e.Name)
		return
	}
	if m := literalProblem(*e.Value, useSecretRef, urlFromEnv); m != "" {
		ps.Add(doc, at.Child("value"), "%s", m)
	}
}

// checkWords refuses credentials in a container's command and args:
// flags such as --password=… and literal credentials.
func checkWords(doc *Document, at Path, command, args []string, ps *Problems) {
	words := slices.Concat(command, args)
	pathOf := func(i int) Path {
		if i < len(command) {
			return at.Child("command").Child(i)
		}
		return at.Child("args").Child(i - len(command))
	}
	flagged := map[int]bool{}
	for _, f := range secretscan.Flags(words) {
		if flagged[f.Arg] {
			continue
		}
		flagged[f.Arg] = true
		ps.Add(doc, pathOf(f.Arg), "%s passes a credential on the command line, which would be written to Git; set an env var with secret_ref and pass %s$(THAT_VAR) instead",
			f.Flag, flagForm(f.Flag))
	}
	for i, word := range words {
		if flagged[i] {
			continue
		}
		if m := literalProblem(word, "set an env var with secret_ref and pass $(THAT_VAR) instead", urlFromEnv); m != "" {
			ps.Add(doc, pathOf(i), "%s", m)
		}
	}
}

// flagForm is how a flag takes a value in one word.
func flagForm(flag string) string {
	if flag == "-p" {
		return "-p"
	}
	return flag + "="
}

// checkValuesSecrets refuses credentials in an addon's Helm values: values
// whose key says they are one (password, apiKey, pass…, but not
// existingSecret or passwordKey), env lists with credential-named literal
// values (extraEnv: [{name: API_KEY, value: …}]), and values shaped like a
// credential.
func checkValuesSecrets(doc *Document, at Path, values any, ps *Problems) {
	done := map[string]bool{} // one problem a value
	add := func(p Path, format string, args ...any) {
		if !done[p.String()] {
			done[p.String()] = true
			ps.Add(doc, p, format, args...)
		}
	}
	walkValues(values, at, func(p Path, key string, v any) {
		switch v := v.(type) {
		case string:
			if v == "" || secretscan.IsReference(v) {
				return
			}
			if secretscan.IsCredentialName(key) {
				add(p, "%q looks like a credential and would be written to Git; let the chart generate it, or point the chart at an existing Secret", key)
			} else if m := literalProblem(v, "put it in a Secret and point the chart at it (its existingSecret or the like)",
				"put the password in a Secret and point the chart at it (its existingSecret or the like)"); m != "" {
				add(p, "%s", m)
			}
		case map[string]any:
			name, _ := v["name"].(string)
			value, _ := v["value"].(string)
			if name != "" && value != "" && !secretscan.IsReference(value) && secretscan.IsCredentialName(name) {
				add(p.Child("value"), "env var %q looks like a credential and its value would be written to Git; put it in a Secret and use valueFrom.secretKeyRef, or point the chart at an existing Secret", name)
			}
		case []any:
			words := make([]string, len(v))
			for i, x := range v {
				words[i], _ = x.(string)
			}
			for _, f := range secretscan.Flags(words) {
				add(p.Child(f.Arg), "%s passes a credential on the command line, which would be written to Git; pass it from a Secret (an env var with valueFrom.secretKeyRef and %s$(THAT_VAR))", f.Flag, flagForm(f.Flag))
			}
		}
	})
}

// walkValues calls f for every value below v, with its path and its key
// ("" in a list), in key order, a value before the values inside it.
func walkValues(v any, p Path, f func(Path, string, any)) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			f(p.Child(k), k, v[k])
			walkValues(v[k], p.Child(k), f)
		}
	case []any:
		for i, x := range v {
			f(p.Child(i), "", x)
			walkValues(x, p.Child(i), f)
		}
	}
}

// contentSecret says why a config file's content holds a credential, or "".
func contentSecret(content string) string {
	return literalProblem(content, "mount it from a Secret (volumes: [{name: …, mount_path: …, secret: {name: <secret>}}]) instead",
		"keep the file's credential in a Secret: mount the Secret as a volume, or take the password from env with $(THAT_VAR) if the program expands it, instead of %s")
}
