package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAccess(t *testing.T) {
	t.Parallel()
	a, err := ParseAccess("access.yaml", []byte(`# who sees what
rules:
  - group: team-shop
    projects: [shop, shop-staging]
  - email: Lead@Example.com
    projects: ["*"]
    role: operator
  - subject: "248289761001"
    projects:
      - billing
    role: viewer
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []AccessRule{
		{Group: "team-shop", Projects: []string{"shop", "shop-staging"}, Where: "access.yaml:3:5"},
		{Email: "Lead@Example.com", Projects: []string{"*"}, Role: "operator", Where: "access.yaml:5:5"},
		{Subject: "248289761001", Projects: []string{"billing"}, Role: "viewer", Where: "access.yaml:8:5"},
	}
	if diff := cmp.Diff(want, a.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name          string
		sub, email    string
		groups        []string
		shop, billing role
		other         role
	}{
		{"a group member", "x", "", []string{"team-shop"}, roleViewer, roleNone, roleNone},
		{"the lead, by email in another case", "y", "lead@example.com", nil, roleOperator, roleOperator, roleOperator},
		{"the subject, in the group too", "248289761001", "", []string{"team-shop"}, roleViewer, roleViewer, roleNone},
		{"nobody named", "z", "z@example.com", []string{"team-billing"}, roleNone, roleNone, roleNone},
		{"an empty email matches no rule", "z", "", nil, roleNone, roleNone, roleNone},
	} {
		g := a.grantFor(tc.sub, tc.email, tc.groups)
		if got := [3]role{g.roleOn("shop"), g.roleOn("billing"), g.roleOn("other")}; got != [3]role{tc.shop, tc.billing, tc.other} {
			t.Errorf("%s: roles on shop, billing, other = %v, want %v", tc.name, got, [3]role{tc.shop, tc.billing, tc.other})
		}
	}
}

func TestParseAccessErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "access.yaml:1:1: the access file must hold one document"},
		{"rules: x", "access.yaml:1:8: rules: must be a list of rules"},
		{"users: []", "access.yaml:1:1: users: unknown field"},
		{"rules:\n  - projects: [a]", "access.yaml:2:5: rules[0]: names nobody"},
		{"rules:\n  - group: g\n    email: e@x\n    projects: [a]", "access.yaml:2:5: rules[0]: sets group and email"},
		{"rules:\n  - group: g", "access.yaml:2:5: rules[0].projects: is required"},
		{"rules:\n  - group: g\n    projects: []", "access.yaml:3:15: rules[0].projects: must be a non-empty list"},
		{"rules:\n  - group: g\n    projects: [Shop]", "access.yaml:3:16: rules[0].projects[0]: must be a project name"},
		{"rules:\n  - group: g\n    projects: [a]\n    role: admin", "access.yaml:4:11: rules[0].role: must be viewer or operator, not \"admin\""},
		{"rules:\n  - email: nobody\n    projects: [a]", "access.yaml:2:12: rules[0].email: \"nobody\" is not an email address"},
		{"rules:\n  - group: 7\n    projects: [a]", "access.yaml:2:12: rules[0].group: must be a non-empty string"},
		{"rules:\n  - grup: g\n    projects: [a]", "access.yaml:2:5: rules[0].grup: unknown field"},
		{"rules:\n  - group: g\n    projects: [*]", "access.yaml:3:"},
	} {
		_, err := ParseAccess("access.yaml", []byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseAccess(%q) = %v, want %q…", tc.in, err, tc.want)
		}
	}
}

func TestParseViewerTokens(t *testing.T) {
	t.Parallel()
	got, err := ParseViewerTokens("viewers", []byte("# team tokens\nold-style-token-0123456789\n\nshop-token-0123456789 shop,shop-staging\nall-token-0123456789  *\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ViewerToken{
		{Token: "old-style-token-0123456789", Projects: []string{"*"}},
		{Token: "shop-token-0123456789", Projects: []string{"shop", "shop-staging"}},
		{Token: "all-token-0123456789", Projects: []string{"*"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	for in, wantErr := range map[string]string{
		"":                                "viewers holds no token",
		"a-token-0123456789 shop,,b":      `viewers:1: "" is not a project name`,
		"a-token-0123456789 shop billing": "viewers:1: a line holds a token and its projects",
		"a-token-0123456789\na-token-0123456789 x": "viewers:2: the token of line 1 again",
	} {
		_, err := ParseViewerTokens("viewers", []byte(in))
		if err == nil || err.Error() != wantErr && !strings.HasPrefix(err.Error(), wantErr) {
			t.Errorf("ParseViewerTokens(%q) = %v, want %q", in, err, wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "0123456789") {
			t.Errorf("the error %q shows the token", err)
		}
	}
}

// FuzzParseAccess: any input is read or refused with a positioned error,
// never a panic, and a rule read names someone and projects.
func FuzzParseAccess(f *testing.F) {
	for _, seed := range []string{testAccessFile, "", "rules: []", "rules:\n  - group: g\n    projects: ['*']\n    role: operator", "rules: [{email: a@b, projects: [x]}]", "a: &x [*x]"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := ParseAccess("f.yaml", []byte(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, r := range a.Rules {
			n := 0
			for _, s := range []string{r.Group, r.Email, r.Subject} {
				if s != "" {
					n++
				}
			}
			if n != 1 || len(r.Projects) == 0 {
				t.Fatalf("rule %+v", r)
			}
		}
	})
}

// FuzzParseViewerTokens: never a panic, never a token in an error.
func FuzzParseViewerTokens(f *testing.F) {
	for _, seed := range []string{"token-0123456789abcdef", "token-0123456789abcdef shop,b", "#x\n\n", "a b c"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		vs, err := ParseViewerTokens("v", []byte(in))
		if err != nil {
			for _, fld := range strings.Fields(in) {
				if len(fld) >= 16 && strings.Contains(err.Error(), fld) {
					t.Fatalf("the error %q shows a token", err)
				}
			}
			return
		}
		for _, v := range vs {
			if v.Token == "" || strings.ContainsAny(v.Token, " \t") || len(v.Projects) == 0 {
				t.Fatalf("token %+v", v)
			}
		}
	})
}
