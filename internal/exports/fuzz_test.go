package exports

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDeclaredValue checks the generic addon's value syntax, which comes
// from users: parsing never fails on a value without references, and a
// composed value, once wired and expanded as Kubernetes does, equals the
// value with every reference replaced and "$$" unescaped.
func FuzzDeclaredValue(f *testing.F) {
	for _, s := range []string{
		"plain", "$$", "$", "$(", "$()", "$(a", "a$(pw)b", "$$(pw)", "$$$(pw)", "x$(host)y$(pw)z$",
		"postgres://u:$(pw)@$(host):5432/db", "$(pw)$(pw)", "$(HOME)$(pw)", ")$((pw)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		decl := []Declared{
			{Key: "host", Value: "h$o"},
			{Key: "pw", Secret: &SecretKeyRef{Name: "s", Key: "k"}},
			{Key: "v", Value: value},
		}
		got, err := ForAddon(generic(decl...))
		toks := parseExpansion(value)
		var want strings.Builder
		for _, tk := range toks {
			switch {
			case !tk.isRef:
				want.WriteString(tk.text)
			case tk.text == "host":
				want.WriteString("h$o")
			case tk.text == "pw":
				want.WriteString("SECRET")
			default:
				if err == nil {
					t.Fatalf("value %q refers to $(%s) but resolved", value, tk.text)
				}
				return
			}
		}
		if err != nil {
			t.Fatalf("value %q: %v", value, err)
		}
		env := Wire("OUT", got["v"])
		defined := map[string]string{"HOME": "/root"}
		for _, v := range env {
			if v.Secret != nil {
				defined[v.Name] = "SECRET"
				continue
			}
			defined[v.Name] = kubeExpand(v.Value, defined)
		}
		if defined["OUT"] != want.String() {
			t.Fatalf("value %q: consumer sees %q, want %q (env %+v)", value, defined["OUT"], want.String(), env)
		}
	})
}

// FuzzValues feeds arbitrary chart values to every catalog type: resolving
// never panics, and what resolves is consistent.
func FuzzValues(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"auth":{"username":"app","database":"db"}}`, `{"architecture":"replication","primary":{"name":"x"}}`,
		`{"auth":{"existingSecret":"s","secretKeys":{"userPasswordKey":"k"}},"fullnameOverride":"x"}`,
		`{"architecture":"replicaset","replicaCount":3,"auth":{"usernames":["a"],"databases":["b"]}}`,
		`{"sentinel":{"enabled":true},"auth":{"enabled":false}}`, `{"fullnameOverride":null,"nameOverride":7}`,
		`{"primary":{"service":{"ports":{"postgresql":"1e3"}}}}`, `{"auth":[1,2]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var vals map[string]any
		if json.Unmarshal([]byte(raw), &vals) != nil {
			return
		}
		for _, typ := range Types() {
			if typ == Generic {
				continue
			}
			in := AddonInput{Type: typ, Release: "rel", Namespace: "ns", Values: vals}
			got, err := ForAddon(in)
			if err != nil {
				continue
			}
			keys, _ := Keys(typ)
			for k, e := range got {
				if !strings.Contains(strings.Join(keys, ","), k) || e.Key != k {
					t.Fatalf("%s: unexpected export %q", typ, k)
				}
				if len(Wire("X", e)) == 0 {
					t.Fatalf("%s: export %q wires to nothing", typ, k)
				}
			}
		}
	})
}
