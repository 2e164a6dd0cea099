package exports

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kubeExpand expands $(VAR) references in s the way the kubelet does for
// container env values: "$$" is "$", "$(NAME)" is the value of NAME when it
// is defined, else left as written, and any other "$" is literal.
func kubeExpand(s string, defined map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i == len(s)-1 {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		if next == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if next == '(' {
			if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
				name := s[i+2 : i+2+end]
				if v, ok := defined[name]; ok {
					b.WriteString(v)
				} else {
					b.WriteString("$(" + name + ")")
				}
				i += 2 + end
				continue
			}
			b.WriteString(s[i:])
			break
		}
		b.WriteByte('$')
	}
	return b.String()
}

// container resolves a container's env list in order, as the kubelet does:
// Secret keys are read from secrets, values expanded against the vars
// defined before them.
func container(t *testing.T, env []EnvVar, secrets func(SecretKeyRef) string) map[string]string {
	t.Helper()
	defined := map[string]string{}
	for _, v := range env {
		if v.Secret != nil {
			if v.Value != "" {
				t.Errorf("env %s has both a value and a secret", v.Name)
			}
			defined[v.Name] = secrets(*v.Secret)
			continue
		}
		defined[v.Name] = kubeExpand(v.Value, defined)
	}
	return defined
}

// fakeSecret returns a URL-safe password that names its Secret key, as the
// charts' alphanumeric passwords are URL-safe.
func fakeSecret(r SecretKeyRef) string { return "pw0" + r.Name + "." + r.Key }

func TestWireOrderAndNames(t *testing.T) {
	t.Parallel()
	exp, err := ForAddon(rendered("postgresql", "my-api-postgres", m{"auth": m{"database": "myapp", "username": "myapp"}}))
	if err != nil {
		t.Fatal(err)
	}
	got := Wire("DATABASE_URL", exp[KeyConnectionString])
	want := []EnvVar{
		{Name: "FW_DATABASE_URL_PASSWORD", Secret: &SecretKeyRef{Name: "my-api-postgres", Key: "password"}},
		{Name: "DATABASE_URL", Value: "postgresql://myapp:$(FW_DATABASE_URL_PASSWORD)@my-api-postgres.shop.svc.cluster.local:5432/myapp"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Wire (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]EnvVar{{Name: "DB_PASSWORD", Secret: &SecretKeyRef{Name: "my-api-postgres", Key: "password"}}}, Wire("DB_PASSWORD", exp[KeyPassword])); diff != "" {
		t.Errorf("Wire secret (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]EnvVar{{Name: "DB_HOST", Value: "my-api-postgres.shop.svc.cluster.local"}}, Wire("DB_HOST", exp[KeyHost])); diff != "" {
		t.Errorf("Wire plain (-want +got):\n%s", diff)
	}
	if got := Wire("X", Export{Key: "x"}); got != nil {
		t.Errorf("Wire of a zero export = %v, want nil", got)
	}
}

// TestWireExpandsToExports wires every export of every variant, runs the
// env list through Kubernetes expansion and checks the consumer sees the
// export's value: hidden vars come first, and connection strings parse
// back into the other exports.
func TestWireExpandsToExports(t *testing.T) {
	t.Parallel()
	for _, tc := range variants() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exp, err := ForAddon(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range slices.Sorted(maps.Keys(exp)) {
				e := exp[key]
				consumer := "APP_" + strings.ToUpper(key)
				env := Wire(consumer, e)
				if len(env) == 0 || env[len(env)-1].Name != consumer {
					t.Fatalf("%s: consumer var is not last: %+v", key, env)
				}
				for _, v := range env[:len(env)-1] {
					if !strings.HasPrefix(v.Name, HiddenPrefix+consumer+"_") {
						t.Errorf("%s: hidden var %q lacks the prefix", key, v.Name)
					}
				}
				got := container(t, env, fakeSecret)[consumer]
				switch e.Kind {
				case Plain:
					if got != e.Value {
						t.Errorf("%s: consumer sees %q, want %q", key, got, e.Value)
					}
				case Secret:
					if got != fakeSecret(*e.Secret) {
						t.Errorf("%s: consumer sees %q", key, got)
					}
				case Composed:
					if strings.Contains(got, "$(") {
						t.Errorf("%s: unexpanded reference in %q", key, got)
					}
				}
				if key == KeyConnectionString {
					checkURL(t, got, exp)
				}
			}
		})
	}
}

// checkURL parses an expanded connection string and checks it against the
// other exports of the addon.
func checkURL(t *testing.T, raw string, exp map[string]Export) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("connection string %q does not parse: %v", raw, err)
	}
	if user, ok := exp[KeyUsername]; ok && u.User.Username() != user.Value {
		t.Errorf("URL user = %q, want %q", u.User.Username(), user.Value)
	}
	pw, hasPW := u.User.Password()
	if p, ok := exp[KeyPassword]; ok {
		if !hasPW || pw != fakeSecret(*p.Secret) {
			t.Errorf("URL password = %q, want the Secret's value", pw)
		}
	} else if hasPW {
		t.Errorf("URL %q has credentials without a password export", raw)
	}
	if !strings.Contains(u.Host, exp[KeyHost].Value+":"+exp[KeyPort].Value) && !strings.Contains(u.Host, "."+exp[KeyHost].Value+":"+exp[KeyPort].Value) {
		t.Errorf("URL host %q lacks %s:%s", u.Host, exp[KeyHost].Value, exp[KeyPort].Value)
	}
	if db, ok := exp[KeyDatabase]; ok && u.Path != "/"+db.Value {
		t.Errorf("URL path = %q, want /%s", u.Path, db.Value)
	}
}

func TestWireEscapesLiterals(t *testing.T) {
	t.Parallel()
	defined := map[string]string{"HOME": "/root"}
	tests := []struct {
		name string
		e    Export
		want string
	}{
		{"plain with reference syntax", Export{Kind: Plain, Value: "a$(HOME)b$$c$"}, "a$(HOME)b$$c$"},
		{"composed literal part", Export{Kind: Composed, Parts: []Part{{Name: "P", Value: "x$(HOME)"}}, Template: "[$(P)]$$(HOME)"}, "[x$(HOME)]$(HOME)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := Wire("OUT", tc.e)
			vals := maps.Clone(defined)
			for _, v := range env {
				vals[v.Name] = kubeExpand(v.Value, vals)
			}
			if vals["OUT"] != tc.want {
				t.Errorf("consumer sees %q, want %q (env %+v)", vals["OUT"], tc.want, env)
			}
		})
	}
}

func TestHiddenName(t *testing.T) {
	t.Parallel()
	if got := HiddenName("DATABASE_URL", PasswordPart); got != "FW_DATABASE_URL_PASSWORD" {
		t.Errorf("HiddenName = %q", got)
	}
	if HiddenName("DB_URL", PasswordPart) == HiddenName("DB", PasswordPart) {
		t.Error("distinct consumers share a hidden name for the same part")
	}
}

func TestChecksum(t *testing.T) {
	t.Parallel()
	base, err := ForAddon(rendered("postgresql", "db", m{"auth": m{"username": "app"}}))
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]Export{"db/connection_string": base[KeyConnectionString], "db/host": base[KeyHost]}
	sum := Checksum(refs)
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		t.Fatalf("Checksum = %q, want 64 hex digits", sum)
	}
	if Checksum(maps.Clone(refs)) != sum {
		t.Error("Checksum is not stable")
	}
	described := maps.Clone(refs)
	h := described["db/host"]
	h.Description = "other words"
	described["db/host"] = h
	if Checksum(described) != sum {
		t.Error("a description change moved the checksum")
	}
	changes := map[string]func(map[string]Export){
		"port": func(x map[string]Export) {
			e := x["db/host"]
			e.Value = "other"
			x["db/host"] = e
		},
		"secret key": func(x map[string]Export) {
			e := x["db/connection_string"]
			e.Parts = []Part{{Name: PasswordPart, Secret: &SecretKeyRef{Name: "db", Key: "other"}}}
			x["db/connection_string"] = e
		},
		"reference name": func(x map[string]Export) {
			x["db/hostname"] = x["db/host"]
			delete(x, "db/host")
		},
		"template": func(x map[string]Export) {
			e := x["db/connection_string"]
			e.Template += "?sslmode=require"
			x["db/connection_string"] = e
		},
	}
	for name, change := range changes {
		changed := maps.Clone(refs)
		change(changed)
		if Checksum(changed) == sum {
			t.Errorf("changing the %s kept the checksum", name)
		}
	}
	if Checksum(nil) == sum || Checksum(nil) != Checksum(map[string]Export{}) {
		t.Error("empty checksum is wrong")
	}
}
