package verify

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// A credential assignment in a config file: a line that sets a key named
// like a credential to a literal value, in the forms config files use:
// YAML and JSON (password: x, "password": "x"), INI, TOML, .properties and
// .env (password = x, DB_PASSWORD=x, export TOKEN=x).
var assignment = regexp.MustCompile(`^\s*(?:export\s+|-\s+)?["']?([A-Za-z_][A-Za-z0-9_.\-]*)["']?\s*[=:]\s*(.*?)\s*,?\s*$`)

// fileCredential is a line of a config file that holds a credential.
type fileCredential struct {
	line int
	key  string
}

// fileCredentials returns the lines of a config file's text that set a
// credential-named key (secretscan.IsCredentialName: DB_PASSWORD,
// api_key, spring.datasource.password; not password_file) to a literal:
// not empty, not a reference ($VAR, ${VAR}, $(VAR)), not encrypted, not a
// placeholder, not a nested block.
func fileCredentials(text string) []fileCredential {
	// Structured files (YAML, JSON) are read as such: JSON keeps a whole
	// object on one line.
	if docs, err := yamlx.Parse([]byte(text)); err == nil {
		var out []fileCredential
		structured := false
		for _, d := range docs {
			if d.Root != nil && (d.Root.Kind == yamlx.MapNode || d.Root.Kind == yamlx.SeqNode) {
				structured = true
				out = append(out, credentialEntries(d.Root)...)
			}
		}
		if structured {
			return out
		}
	}
	var out []fileCredential
	for i, line := range strings.Split(text, "\n") {
		if len(line) > 4096 {
			continue
		}
		m := assignment.FindStringSubmatch(line)
		if m == nil || !secretscan.IsCredentialName(m[1]) {
			continue
		}
		if literalCredential(m[2]) {
			out = append(out, fileCredential{line: i + 1, key: m[1]})
		}
	}
	return out
}

// literalCredential reports whether an assigned value is a literal that
// may be a credential.
func literalCredential(v string) bool {
	if i := strings.Index(v, " #"); i >= 0 && !strings.HasPrefix(v, `"`) && !strings.HasPrefix(v, "'") {
		v = strings.TrimSpace(v[:i]) // a trailing comment
	}
	v = strings.TrimSuffix(v, ";")
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		v = v[1 : len(v)-1]
	}
	switch {
	case v == "", strings.ContainsAny(v[:1], "|>{[&*!#%"):
		return false // empty, a block, a nested value, an anchor, a tag, a comment, a format
	case secretscan.IsReference(v), secretscan.IsEncrypted(v), strings.HasPrefix(v, "$"):
		return false
	case strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"), strings.Trim(v, "*") == "", strings.Trim(strings.ToLower(v), "x") == "":
		return false // <password>, ****, xxxx
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "null", "~", "none", "nil":
		return false
	}
	if strings.Trim(v, "0123456789.-") == "" {
		return false // a number: a count or a duration, not a secret
	}
	return true
}

// credentialEntries returns, anywhere below n, the mapping entries with a
// credential-like key and a literal string value, and the {name, value}
// mappings (env vars) with a credential-like name and a literal value, with
// their lines.
func credentialEntries(n *node) []fileCredential {
	var out []fileCredential
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		if n.Kind == yamlx.MapNode {
			if name, v := n.Get("name").Text(), n.Get("value"); plain(v) && literalCredential(v.Str) && secretscan.IsCredentialName(name) {
				out = append(out, fileCredential{line: int(v.Line), key: name})
			}
			for i := 0; i < len(n.Kids); i += 2 {
				if k, v := n.Kids[i].Str, n.Kids[i+1]; plain(v) && literalCredential(v.Str) && secretscan.IsCredentialName(k) {
					out = append(out, fileCredential{line: int(v.Line), key: k})
				}
			}
		}
		for _, k := range n.Kids {
			walk(k)
		}
	}
	walk(n)
	return out
}

// configFileSecrets reports the credentials in the files a ConfigMap
// holds (data values), by the line of the file.
func (r *run) configFileSecrets(o *object, field, key string, v *node) []Finding {
	var out []Finding
	for _, c := range fileCredentials(v.Str) {
		out = append(out, r.finding(o, CheckSecret, SeverityError, field,
			fmt.Sprintf("file %q, line %d: %q holds a credential in plain text, and ConfigMaps are not encrypted; "+
				"reference an environment variable set from a Secret (valueFrom.secretKeyRef) if the program expands one, or mount the value from a Secret",
				key, c.line, c.key)))
	}
	return out
}

// patchSecrets reports the credentials a kustomization patch carries in
// plain text: a credential-named key with a literal value, or a {name,
// value} entry (an env var) with a credential-like name. Patches that
// apply to an object are checked on the objects they make; this is for
// those that apply to none, whose values are in Git all the same.
func (r *run) patchSecrets(p patchRef) []Finding {
	var out []Finding
	msg := "this patch sets %q to a literal credential; patches may not carry secret values: reference a Secret (valueFrom.secretKeyRef)"
	add := func(key string) {
		out = append(out, Finding{Check: CheckSecret, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: r.display(p.file), Line: p.line, Column: p.col,
			Message: fmt.Sprintf(msg, key)}})
	}
	for _, c := range credentialEntries(p.root) {
		add(c.key)
	}
	return out
}
