package build

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

// TestLeakScanner: each form of a secret is found in a stream written in
// small pieces, wherever it starts; text without it is not.
func TestLeakScanner(t *testing.T) {
	t.Parallel()
	secret := []byte("tok-Value/with+chars?&=~9 and a long tail to wrap base64 lines past seventy-six columns\n")
	wrap := func(s string) string {
		var b strings.Builder
		for len(s) > 76 {
			b.WriteString(s[:76] + "\n")
			s = s[76:]
		}
		return b.String() + s
	}
	cases := map[string]string{
		"plain":              "x" + string(secret) + "y",
		"trimmed":            "key=" + strings.TrimSpace(string(secret)) + ";",
		"hex":                "0x" + hex.EncodeToString(secret),
		"HEX":                strings.ToUpper(hex.EncodeToString(secret)),
		"query escaped":      "u=" + url.QueryEscape(string(secret)),
		"path escaped":       "/" + url.PathEscape(strings.TrimSpace(string(secret))),
		"base64 wrapped":     wrap(base64.StdEncoding.EncodeToString(secret)),
		"base64url":          base64.URLEncoding.EncodeToString(secret),
		"base64 at offset 1": base64.StdEncoding.EncodeToString(append([]byte("a"), secret...)),
		"base64 at offset 2": base64.StdEncoding.EncodeToString(append([]byte("ab"), secret...)),
		"base64 in a text":   base64.RawStdEncoding.EncodeToString([]byte("user:" + strings.TrimSpace(string(secret)) + "@host")),
	}
	for name, text := range cases {
		s := newLeakScanner([]string{"tok"}, [][]byte{secret})
		s.reset()
		for i := 0; i < len(text); i += 7 {
			s.Write([]byte(text[i:min(i+7, len(text))]))
		}
		if s.hit < 0 || s.ids[s.hit] != "tok" {
			t.Errorf("%s: not found in %q", name, text)
		}
		got := redact(text, [][]byte{secret})
		if !strings.Contains(got, secretMask) {
			t.Errorf("%s: not masked: %q", name, got)
		}
		if name == "base64 wrapped" {
			for _, line := range strings.Split(text, "\n") {
				if strings.Contains(got, line) {
					t.Errorf("a line of the wrapped base64 is not masked: %q", got)
				}
			}
		}
	}
	s := newLeakScanner([]string{"tok"}, [][]byte{secret})
	for _, clean := range []string{"tok-Value/with", "nothing here", base64.StdEncoding.EncodeToString([]byte("other value entirely"))} {
		if s.check(clean) >= 0 {
			t.Errorf("found in %q", clean)
		}
	}
	if newLeakScanner([]string{"x"}, [][]byte{[]byte("ab\n")}) != nil {
		t.Error("a 2-byte secret is searched for")
	}
	forms := allSecretForms(secret)
	for i := 1; i < len(forms); i++ {
		if len(forms[i]) > len(forms[i-1]) || bytes.Equal(forms[i], forms[i-1]) {
			t.Errorf("forms %d and %d are not longest first, each once: %q, %q", i-1, i, forms[i-1], forms[i])
		}
	}
}
