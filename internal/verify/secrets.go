package verify

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

var varRefs = regexp.MustCompile(`^(\$\([A-Za-z_][A-Za-z0-9_]*\)|\$\{[A-Za-z_][A-Za-z0-9_]*(:?[-=][^}]*)?\})+$`)

// A token is a credential recognisable by a fixed prefix followed by a run
// of characters of a known set.
type token struct {
	prefixes []string
	chars    func(c byte) bool
	min, max int // length of the run after the prefix
	what     string
}

func alnum(c byte) bool     { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
func upperNum(c byte) bool  { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
func wordChar(c byte) bool  { return alnum(c) || c == '_' }
func tokenChar(c byte) bool { return alnum(c) || c == '_' || c == '-' }

var tokens = []token{
	{prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, chars: alnum, min: 36, max: 36, what: "a GitHub token (gh?_…)"},
	{prefixes: []string{"github_pat_"}, chars: wordChar, min: 22, max: 1 << 10, what: "a GitHub fine-grained token (github_pat_…)"},
	{prefixes: []string{"glpat-"}, chars: tokenChar, min: 20, max: 1 << 10, what: "a GitLab token (glpat-…)"},
	{prefixes: []string{"xoxa-", "xoxb-", "xoxp-"}, chars: func(c byte) bool { return alnum(c) || c == '-' }, min: 10, max: 1 << 10, what: "a Slack token (xox?-…)"},
	{prefixes: []string{"AKIA"}, chars: upperNum, min: 16, max: 16, what: "an AWS access key id (AKIA…)"},
	{prefixes: []string{"sk_live_", "rk_live_"}, chars: alnum, min: 16, max: 1 << 10, what: "a Stripe live key (sk_live_…)"},
}

var pemKey = regexp.MustCompile(`-----BEGIN ((RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`)

const plainAdvice = "in plain text; keep credentials in a Secret encrypted with SOPS, or outside Git"

// scanSecrets looks for credentials in a file's text. Findings name the
// kind of credential and never its value.
func scanSecrets(file string, data []byte) []Finding {
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil // binary
	}
	var out []Finding
	add := func(off int, msg string) {
		line, col := lineCol(data, off)
		out = append(out, Finding{Check: CheckSecret, Severity: SeverityError, File: file, Line: line, Column: col, Message: msg})
	}
	for _, tk := range tokens {
		for _, prefix := range tk.prefixes {
			for i := 0; ; {
				j := bytes.Index(data[i:], []byte(prefix))
				if j < 0 {
					break
				}
				start := i + j
				i = start + len(prefix)
				if start > 0 && wordChar(data[start-1]) {
					continue
				}
				end := i
				for end < len(data) && tk.chars(data[end]) {
					end++
				}
				if n := end - i; n < tk.min || n > tk.max || end < len(data) && wordChar(data[end]) {
					continue
				}
				add(start, tk.what+" "+plainAdvice)
				i = end
			}
		}
	}
	if bytes.Contains(data, []byte("PRIVATE KEY")) {
		for _, loc := range pemKey.FindAllIndex(data, -1) {
			add(loc[0], "a PEM private key "+plainAdvice)
		}
	}
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("://"))
		if j < 0 {
			break
		}
		at := i + j
		i = at + 3
		scheme, userinfo, ok := urlCredentials(data, at)
		if !ok {
			continue
		}
		user, pass, _ := strings.Cut(userinfo, ":")
		if varRefs.MatchString(pass) {
			continue // a $(VAR) reference, resolved in the cluster
		}
		add(at-len(scheme), fmt.Sprintf("a password in a %s:// URL in plain text (%s://%s:****@…); reference it as $(VAR) from a secretKeyRef env var", scheme, scheme, user))
	}
	return out
}

// urlCredentials returns the scheme and the user:password of a URL whose
// "://" is at off, when it has both a user and a password.
func urlCredentials(data []byte, off int) (scheme, userinfo string, ok bool) {
	s := off
	for s > 0 && (alnum(data[s-1]) || data[s-1] == '+' || data[s-1] == '.' || data[s-1] == '-') {
		s--
	}
	if s == off || !(data[s] >= 'a' && data[s] <= 'z' || data[s] >= 'A' && data[s] <= 'Z') {
		return "", "", false
	}
	e := off + 3
	colon := -1
	for ; e < len(data); e++ {
		c := data[e]
		if c == '@' {
			break
		}
		if c == ':' && colon < 0 {
			colon = e
		}
		if c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c <= ' ' {
			return "", "", false
		}
	}
	if e >= len(data) || colon < 0 || colon == off+3 || colon == e-1 {
		return "", "", false
	}
	return string(data[s:off]), string(data[off+3 : e]), true
}

// credentialValueKey matches Helm values keys that hold credentials.
var credentialValueKey = regexp.MustCompile(`(?i)(password|passwd|secret|token|apikey|api_key|privatekey|private_key)`)

// checkSecrets checks an object for secret values in plain text: a Secret
// that is not SOPS-encrypted, a container env var with a credential-like
// name and a literal value, and credential-like Helm values.
func (r *run) checkSecrets(o *object) []Finding {
	var out []Finding
	gvk := gvkOf(o.root)
	sops := o.root.Get("sops") != nil
	switch {
	case gvk.Group == "" && gvk.Kind == "Secret" && !sops:
		for _, field := range []string{"data", "stringData"} {
			m := o.root.Get(field)
			if m == nil || m.Kind != yamlx.MapNode {
				continue
			}
			for i := 0; i < len(m.Kids); i += 2 {
				if m.Kids[i+1].Text() == "" {
					continue
				}
				out = append(out, r.finding(o, CheckSecret, SeverityError, field+"."+m.Kids[i].Str,
					"Secret value in plain text; encrypt the Secret with SOPS, or create it outside Git"))
			}
		}
	case gvk.Group == "helm.toolkit.fluxcd.io" && gvk.Kind == "HelmRelease" && !sops:
		walkNode(o.root.Get("spec").Get("values"), "spec.values", func(p, key string, v *node) {
			if v.Kind != yamlx.ScalarNode || v.Tag != yamlx.StrTag || v.Str == "" || !credentialValueKey.MatchString(key) {
				return
			}
			lk := strings.ToLower(key)
			if strings.HasPrefix(lk, "existing") || strings.HasSuffix(lk, "key") || strings.HasSuffix(lk, "keys") ||
				strings.HasSuffix(lk, "ref") || strings.HasSuffix(lk, "name") || varRefs.MatchString(v.Str) {
				return
			}
			out = append(out, r.finding(o, CheckSecret, SeverityError, p,
				fmt.Sprintf("%q looks like a credential in plain text; let the chart generate it, or point the chart at an existing Secret", key)))
		})
	}
	for _, c := range containers(o.root, gvk) {
		env := c.n.Get("env")
		if env == nil || env.Kind != yamlx.SeqNode {
			continue
		}
		for i, e := range env.Kids {
			name, value := e.Get("name").Text(), e.Get("value")
			if value == nil || value.IsNull() || value.Str == "" || !spec.LooksLikeCredential(name) || varRefs.MatchString(value.Str) {
				continue
			}
			out = append(out, r.finding(o, CheckSecret, SeverityError, fmt.Sprintf("%s.env[%d].value", c.path, i),
				fmt.Sprintf("env var %q looks like a credential and has a literal value; use valueFrom.secretKeyRef", name)))
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
}

// containers returns the init containers and containers of a workload.
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
				out = append(out, container{n: c, path: fmt.Sprintf("%s.%s[%d]", sp, list, i), init: list == "initContainers"})
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
