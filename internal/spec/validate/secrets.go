package validate

import (
	"maps"
	"slices"

	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// urlFromEnv is how a workload builds a URL with a password.
const urlFromEnv = "take the password from a Secret into an env var listed before this one with secret_ref, and write %s, or use export_ref"

const useSecretRef = "put it in a Secret and use secret_ref: {name: <secret>, key: <key>} instead"

// checkEnvSecret refuses an env var whose literal value is a credential:
// by its name, or by its shape.
func checkEnvSecret(doc *load.Document, at load.Path, e *spec.EnvVar, ps *load.Problems) {
	if e.Value == nil || *e.Value == "" || secretscan.IsReference(*e.Value) {
		return
	}
	if secretscan.IsCredentialName(e.Name) {
		ps.Add(doc, at.Child("value"), "%q looks like a credential and its value would be written to Git; use secret_ref: {name: <secret>, key: <key>} instead", e.Name)
		return
	}
	if m := load.LiteralProblem(*e.Value, useSecretRef, urlFromEnv); m != "" {
		ps.Add(doc, at.Child("value"), "%s", m)
	}
}

// checkWords refuses credentials in a container's command and args:
// flags such as --password=… and literal credentials.
func checkWords(doc *load.Document, at load.Path, command, args []string, ps *load.Problems) {
	words := slices.Concat(command, args)
	pathOf := func(i int) load.Path {
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
		if m := load.LiteralProblem(word, "set an env var with secret_ref and pass $(THAT_VAR) instead", urlFromEnv); m != "" {
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
func checkValuesSecrets(doc *load.Document, at load.Path, values any, ps *load.Problems) {
	done := map[string]bool{} // one problem a value
	add := func(p load.Path, format string, args ...any) {
		if !done[p.String()] {
			done[p.String()] = true
			ps.Add(doc, p, format, args...)
		}
	}
	walkValues(values, at, func(p load.Path, key string, v any) {
		switch v := v.(type) {
		case string:
			if v == "" || secretscan.IsReference(v) {
				return
			}
			if secretscan.IsCredentialName(key) {
				add(p, "%q looks like a credential and would be written to Git; let the chart generate it, or point the chart at an existing Secret", key)
			} else if m := load.LiteralProblem(v, "put it in a Secret and point the chart at it (its existingSecret or the like)",
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
func walkValues(v any, p load.Path, f func(load.Path, string, any)) {
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
