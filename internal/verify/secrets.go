package verify

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetwright/fleetwright/internal/diag"
	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

const plainAdvice = "in plain text; keep credentials in a Secret encrypted with SOPS, or outside Git"

// describe is the message of a credential found in a file's text.
func describe(m secretscan.Match) string {
	if m.Kind == secretscan.URLPassword {
		return fmt.Sprintf("%s in plain text (%s); put the password in a Secret, set an env var from it with valueFrom.secretKeyRef "+
			"before this one in the same container, and write $(THAT_VAR) in its place", m.What, m.Redacted())
	}
	return m.What + " " + plainAdvice
}

// scanSecrets looks for credentials in a file's text, and in a YAML file's
// values as they read once unescaped ("\x67hp_…"). Findings name the kind
// of credential and never its value.
func scanSecrets(file string, data []byte) []Finding {
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil // binary
	}
	var out []Finding
	lines := map[int]bool{}
	text := string(data)
	for _, m := range secretscan.Find(text) {
		line, col := lineCol(data, m.Start)
		lines[line] = true
		f := Finding{Check: CheckSecret, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: file, Line: line, Column: col, Message: describe(m)}}
		if name, ok := escapedPassword(text, m); ok {
			// $$(NAME) holds no credential: it is the text $(NAME).
			f.Severity, f.Message = SeverityWarning, escapedMessage(m, name)
		}
		out = append(out, f)
	}
	// Escapes are the one way YAML spells a value other than as it is
	// (folding only joins lines with spaces, which no credential holds).
	if !isYAML(file) || bytes.IndexByte(data, '\\') < 0 {
		return out
	}
	docs, err := yamlx.Parse(data)
	if err != nil {
		return out // reported by the YAML check
	}
	for _, d := range docs {
		walkScalars(d.Root, func(n *node) {
			if n.Tag != yamlx.StrTag || lines[int(n.Line)] {
				return
			}
			if ms := secretscan.Find(n.Str); len(ms) > 0 {
				lines[int(n.Line)] = true
				out = append(out, Finding{Check: CheckSecret, Diagnostic: diag.Diagnostic{Severity: SeverityError, File: file, Line: int(n.Line), Column: int(n.Col),
					Message: describe(escaped(ms[0]))}})
			}
		})
	}
	return out
}

// escaped says that a match was spelled with YAML escapes.
func escaped(m secretscan.Match) secretscan.Match {
	m.What += ", spelled with YAML escapes,"
	return m
}

// walkScalars calls f for every scalar below n, keys included.
func walkScalars(n *node, f func(*node)) {
	if n == nil {
		return
	}
	if n.Kind == yamlx.ScalarNode {
		f(n)
	}
	for _, k := range n.Kids {
		walkScalars(k, f)
	}
}

// plain reports whether a scalar holds a value in plain text: not empty,
// not SOPS-encrypted, not a $(VAR) reference.
func plain(v *node) bool {
	return v != nil && v.Kind == yamlx.ScalarNode && v.Tag == yamlx.StrTag && v.Str != "" &&
		!secretscan.IsEncrypted(v.Str) && !secretscan.IsReference(v.Str)
}

// checkSecrets checks an object for secret values in plain text: a Secret
// whose values are not SOPS-encrypted, a ConfigMap holding a credential, a
// container env var with a credential-like name and a literal value, a
// credential passed as a flag, credential-like Helm values, and the same in
// the items of a List. Values SOPS encrypted (ENC[…]) are not plain text;
// a sops key alone does not make the others encrypted.
func (r *run) checkSecrets(o *object) []Finding {
	var out []Finding
	gvk := gvkOf(o.root)
	sops := o.root.Get("sops") != nil
	switch {
	case strings.HasSuffix(gvk.Kind, "List") && o.root.Get("items") != nil && o.root.Get("items").Kind == yamlx.SeqNode:
		for _, item := range o.root.Get("items").Kids {
			if item.Kind == yamlx.MapNode {
				out = append(out, r.checkSecrets(newObject(item, item, o.file, o.ks, o.cluster))...)
			}
		}
	case gvk.Group == "" && gvk.Kind == "Secret":
		msg := "Secret value in plain text; encrypt the Secret with SOPS, or create it outside Git"
		if sops {
			msg = "Secret value in plain text though the Secret has sops metadata; encrypt it with SOPS (sops --encrypt), so that it reads ENC[…]"
		}
		for _, field := range []string{"data", "stringData"} {
			m := o.root.Get(field)
			if m == nil || m.Kind != yamlx.MapNode {
				continue
			}
			for i := 0; i < len(m.Kids); i += 2 {
				if v := m.Kids[i+1]; v.Text() == "" || secretscan.IsEncrypted(v.Str) {
					continue
				}
				out = append(out, r.finding(o, CheckSecret, SeverityError, field+"."+m.Kids[i].Str, msg))
			}
		}
	case gvk.Group == "" && gvk.Kind == "ConfigMap":
		out = append(out, r.configMapSecrets(o)...)
	case gvk.Group == "helm.toolkit.fluxcd.io" && gvk.Kind == "HelmRelease":
		walkNode(o.root.Get("spec").Get("values"), "spec.values", func(p, key string, v *node) {
			switch {
			case v.Kind == yamlx.ScalarNode && plain(v) && secretscan.IsCredentialName(key):
				out = append(out, r.finding(o, CheckSecret, SeverityError, p,
					fmt.Sprintf("%q looks like a credential in plain text; let the chart generate it, or point the chart at an existing Secret", key)))
			case v.Kind == yamlx.MapNode:
				out = append(out, r.valuesEnv(o, p, v)...)
			case v.Kind == yamlx.SeqNode:
				for i, item := range v.Kids {
					out = append(out, r.valuesEnv(o, fmt.Sprintf("%s[%d]", p, i), item)...)
				}
				out = append(out, r.flagFindings(o, p, v)...)
			}
		})
	}
	for _, c := range containers(o.root, gvk) {
		if env := c.n.Get("env"); env != nil && env.Kind == yamlx.SeqNode {
			for i, e := range env.Kids {
				if name := e.Get("name").Text(); plain(e.Get("value")) && secretscan.IsCredentialName(name) && !escapedRef.MatchString(e.Get("value").Str) {
					out = append(out, r.finding(o, CheckSecret, SeverityError, fmt.Sprintf("%s.env[%d].value", c.path, i),
						fmt.Sprintf("env var %q looks like a credential and has a literal value; use valueFrom.secretKeyRef", name)))
				}
			}
		}
		var words []*node
		var paths []string
		for _, list := range []string{"command", "args"} {
			if l := c.n.Get(list); l != nil && l.Kind == yamlx.SeqNode {
				for i, w := range l.Kids {
					words = append(words, w)
					paths = append(paths, fmt.Sprintf("%s.%s[%d]", c.path, list, i))
				}
			}
		}
		out = append(out, r.flags(o, words, func(i int) string { return paths[i] })...)
	}
	return out
}

// valuesEnv reports an env var of Helm values ({name: API_KEY, value: …}
// in extraEnv and the like) with a credential-like name and a literal value.
func (r *run) valuesEnv(o *object, p string, v *node) []Finding {
	name := v.Get("name").Text()
	if !plain(v.Get("value")) || !secretscan.IsCredentialName(name) {
		return nil
	}
	return []Finding{r.finding(o, CheckSecret, SeverityError, p+".value",
		fmt.Sprintf("env var %q looks like a credential and has a literal value; put it in a Secret and use valueFrom.secretKeyRef, or point the chart at an existing Secret", name))}
}

// flagFindings reports credential flags in a list of Helm values (extraArgs).
func (r *run) flagFindings(o *object, p string, l *node) []Finding {
	return r.flags(o, l.Kids, func(i int) string { return fmt.Sprintf("%s[%d]", p, i) })
}

// flags reports the credentials a command line passes as flags.
func (r *run) flags(o *object, words []*node, at func(int) string) []Finding {
	strs := make([]string, len(words))
	for i, w := range words {
		strs[i] = w.Text()
	}
	var out []Finding
	seen := map[int]bool{}
	for _, f := range secretscan.Flags(strs) {
		if !seen[f.Arg] {
			seen[f.Arg] = true
			out = append(out, r.finding(o, CheckSecret, SeverityError, at(f.Arg),
				fmt.Sprintf("%s passes a credential on the command line in plain text; take it from an env var with valueFrom.secretKeyRef and pass $(VAR)", f.Flag)))
		}
	}
	return out
}

// configMapSecrets reports the credentials of a ConfigMap, which is never
// encrypted: a key named like one (DB_PASSWORD) with a value, and
// credentials in binaryData once decoded (the text scan sees the rest).
func (r *run) configMapSecrets(o *object) []Finding {
	var out []Finding
	for _, field := range []string{"data", "binaryData"} {
		m := o.root.Get(field)
		if m == nil || m.Kind != yamlx.MapNode {
			continue
		}
		for i := 0; i < len(m.Kids); i += 2 {
			key, v := m.Kids[i].Str, m.Kids[i+1]
			if !plain(v) {
				continue
			}
			p := field + "." + key
			if secretscan.IsCredentialName(key) {
				out = append(out, r.finding(o, CheckSecret, SeverityError, p,
					fmt.Sprintf("ConfigMap key %q looks like a credential and ConfigMaps are not encrypted; move it to a Secret encrypted with SOPS and use secretKeyRef", key)))
				continue
			}
			if field == "data" {
				out = append(out, r.configFileSecrets(o, p, key, v)...)
				continue
			}
			if len(secretscan.Find(v.Str)) > 0 {
				continue
			}
			dec, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v.Str), ""))
			if err != nil {
				continue
			}
			if ms := secretscan.Find(string(dec)); len(ms) > 0 {
				out = append(out, r.finding(o, CheckSecret, SeverityError, p,
					fmt.Sprintf("ConfigMap binaryData holds %s (base64-encoded) in plain text; keep it in a Secret encrypted with SOPS", ms[0].What)))
			}
		}
	}
	return out
}

// walkNode calls f for every mapping entry below n, with its path.
func walkNode(n *node, p string, f func(p, key string, v *node)) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yamlx.MapNode:
		for i := 0; i < len(n.Kids); i += 2 {
			child := p + "." + n.Kids[i].Str
			f(child, n.Kids[i].Str, n.Kids[i+1])
			walkNode(n.Kids[i+1], child, f)
		}
	case yamlx.SeqNode:
		for i, k := range n.Kids {
			walkNode(k, fmt.Sprintf("%s[%d]", p, i), f)
		}
	}
}

// podSpecPaths are where each workload kind keeps its pod spec.
var podSpecPaths = map[string]string{
	"apps/Deployment": "spec.template.spec", "apps/StatefulSet": "spec.template.spec", "apps/DaemonSet": "spec.template.spec",
	"apps/ReplicaSet": "spec.template.spec", "batch/Job": "spec.template.spec", "batch/CronJob": "spec.jobTemplate.spec.template.spec",
	"/Pod": "spec", "/PodTemplate": "template.spec", "/ReplicationController": "spec.template.spec",
}

type container struct {
	n    *node
	path string
	init bool
	// sidecar is an init container with restartPolicy Always, which runs
	// as long as the pod.
	sidecar bool
}

// containers returns the init containers (sidecars included) and the
// containers of a workload.
func containers(root *node, gvk schema.GroupVersionKind) []container {
	sp, ok := podSpecPaths[gvk.Group+"/"+gvk.Kind]
	if !ok {
		return nil
	}
	ps, _ := root.Path(sp)
	var out []container
	for _, list := range []string{"initContainers", "containers"} {
		l := ps.Get(list)
		if l == nil || l.Kind != yamlx.SeqNode {
			continue
		}
		for i, c := range l.Kids {
			if c.Kind == yamlx.MapNode {
				init := list == "initContainers"
				out = append(out, container{n: c, path: fmt.Sprintf("%s.%s[%d]", sp, list, i), init: init,
					sidecar: init && c.Get("restartPolicy").Text() == "Always"})
			}
		}
	}
	return out
}

// lineCol returns the 1-based line and column (in characters) of offset off.
func lineCol(data []byte, off int) (int, int) {
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[start:off])
}
