package secretscan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	t.Parallel()
	gh := "ghp_" + strings.Repeat("aB3d", 9)
	tests := []struct {
		text string
		want []string // What of each match
	}{
		{"token: " + gh, []string{"a GitHub token (gh?_…)"}},
		{"x" + gh, nil},    // inside a word
		{gh + "x", nil},    // longer than a GitHub token
		{"ghp_short", nil}, // too short
		{"AKIAIOSFODNN7EXAMPLE", []string{"an AWS access key id (AKIA…)"}},
		{"https://" + gh + "@github.com/o/r", []string{"a GitHub token (gh?_…)"}},
		{"https://x:" + gh + "@github.com/o/r", []string{"a password in a https:// URL"}}, // one match, not two
		{"postgres://app:$(PW)@db/app postgres://app:${PW}@db postgres://u:<password>@db postgres://u:****@db", nil},
		{"http://host:8080/x?a=b:c@d", nil},
		{"-----BEGIN CERTIFICATE-----", nil},
		{"-----BEGIN OPENSSH PRIVATE KEY-----", []string{"a PEM private key"}},
		{"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUI=", nil}, // a base64 certificate
		{"eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", nil},         // no signature
	}
	for _, tt := range tests {
		var got []string
		for _, m := range Find(tt.text) {
			got = append(got, m.What)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("Find(%q) (-want +got):\n%s", tt.text, d)
		}
	}
}

func TestFindRedactsUserGivingAwayCredentials(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"mysql://admin:admin@db/x", "s3://AKIAIOSFODNN7EXAMPLE:s3cr3t@bucket"} {
		ms := Find(text)
		if len(ms) != 1 || ms[0].Redacted() != ms[0].Scheme+"://:****@…" {
			t.Errorf("Find(%q) = %+v", text, ms)
		}
	}
}

// fixedWhat are the names of matches that do not come from the text.
var fixedWhat = func() map[string]bool {
	m := map[string]bool{"a PEM private key": true, "a base64-encoded PEM private key": true, "a JSON Web Token (eyJ…)": true,
		"a credential in an Authorization header": true}
	for _, tk := range tokens {
		m[tk.what] = true
	}
	return m
}()

// FuzzFind checks that the scanner never panics, that matches lie in the
// text in order, and that what a message is made of never shows the
// credential: fixed names, and for URLs the scheme and a user that does
// not hold the password.
func FuzzFind(f *testing.F) {
	for _, s := range []string{
		"ghp_" + strings.Repeat("aB3d", 9), "postgres://app:hunter2secret@db/app", "redis://:pw@x", "-----BEGIN RSA PRIVATE KEY-----",
		"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"AIzaSyA-1234567890abcdefghijklmnopqrstu", "Authorization: Bearer abcdef0123456789", "a://b:c@", "://", "x://:@", "https://hooks.slack.com/services/T0000000000000000000000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		end := 0
		for _, m := range Find(text) {
			if m.Start < end || m.End <= m.Start || m.End > len(text) {
				t.Fatalf("match %+v out of place (previous end %d) in %q", m, end, text)
			}
			end = m.End
			if m.Kind != URLPassword {
				if !fixedWhat[m.What] {
					t.Fatalf("match %+v of %q names itself from the text", m, text)
				}
				continue
			}
			rest := text[m.Start:m.End]
			rest = rest[strings.Index(rest, "://")+3:]
			pass := rest[strings.IndexByte(rest, ':')+1:]
			if m.What != "a password in a "+m.Scheme+":// URL" ||
				m.User != "" && (strings.Contains(m.User, pass) || len(Find(m.User)) > 0) {
				t.Fatalf("match %+v of %q shows the password %q", m, text, pass)
			}
		}
		for _, fm := range Flags(strings.Fields(text)) {
			if fm.Arg < 0 || fm.Arg >= len(strings.Fields(text)) {
				t.Fatalf("flag %+v out of range", fm)
			}
		}
		IsCredentialName(text)
	})
}
