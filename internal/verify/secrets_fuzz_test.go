package verify

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/yamlx"
)

// FuzzScanSecrets checks that the file scan never panics, points inside
// the file, and never shows a credential it found, in the text or in the
// values as they read once unescaped.
func FuzzScanSecrets(f *testing.F) {
	for _, s := range []string{
		"token: ghp_" + strings.Repeat("aB3d", 9) + "\n",
		"data:\n  note: \"\\x67hp_" + strings.Repeat("aB3d", 9) + "\"\n",
		"url: postgres://app:hunter2secret@db/app\n",
		"k: \"redis://:s3cret\\x70ass@cache\"\n",
		"key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND\n",
		"- \"\\u0041KIAIOSFODNN7EXAMPLE\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		findings := scanSecrets("f.yaml", data)
		texts := []string{string(data)}
		if docs, err := yamlx.Parse(data); err == nil {
			for _, d := range docs {
				walkScalars(d.Root, func(n *node) { texts = append(texts, n.Str) })
			}
		}
		var secrets []string
		for _, text := range texts {
			for _, m := range secretscan.Find(text) {
				s := text[m.Start:m.End]
				if m.Kind == secretscan.URLPassword {
					rest := s[strings.Index(s, "://")+3:]
					if s = rest[strings.IndexByte(rest, ':')+1:]; strings.Contains(m.Scheme, s) {
						continue
					}
				}
				if len(s) >= 8 {
					secrets = append(secrets, s)
				}
			}
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, fd := range findings {
			if fd.Line < 1 || fd.Line > lines || fd.Column < 1 {
				t.Fatalf("finding %+v outside the file of %d lines", fd, lines)
			}
			for _, s := range secrets {
				if strings.Contains(fd.Message, s) {
					t.Fatalf("finding %q shows %q", fd.Message, s)
				}
			}
		}
	})
}

// FuzzFileCredentials checks that reading a config file's credentials
// never panics and reports lines of the file, each once at most per key.
func FuzzFileCredentials(f *testing.F) {
	for _, s := range []string{
		"password: hunter2\npassword_file: /x\n",
		"export DB_PASSWORD=hunter2\nLOG=debug\n",
		`{"clientSecret": "abc", "n": 1}`,
		"[db]\npassword = \"x\" # comment\n",
		"- name: API_TOKEN\n  value: abc\n",
		"a: |\n  token: x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n := strings.Count(text, "\n") + 1
		for _, c := range fileCredentials(text) {
			if c.line < 1 || c.line > n {
				t.Errorf("line %d of a %d-line file", c.line, n)
			}
			if !secretscan.IsCredentialName(c.key) {
				t.Errorf("%q is not a credential name", c.key)
			}
		}
	})
}
