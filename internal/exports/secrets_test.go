package exports

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secretMarker starts every password literal the tests put in chart values.
const secretMarker = "LeakedPw"

// passwordValues are chart values that carry credentials, per type. None of
// them may reach an export or an env var.
func passwordValues(typ string) map[string]any {
	pw := func(field string) string { return secretMarker + "-" + field }
	switch typ {
	case "postgresql":
		return m{
			"auth":    m{"postgresPassword": pw("postgres"), "password": pw("user"), "replicationPassword": pw("repl")},
			"global":  m{"postgresql": m{"auth": m{"postgresPassword": pw("gpostgres"), "password": pw("guser")}}},
			"ldap":    m{"bindpw": pw("ldap"), "bind_password": pw("ldap2")},
			"primary": m{"initdb": m{"password": pw("initdb")}},
		}
	case "mysql", "mariadb":
		return m{"auth": m{"rootPassword": pw("root"), "password": pw("user"), "replicationPassword": pw("repl")}}
	case "redis":
		return m{"auth": m{"password": pw("redis")}, "global": m{"redis": m{"password": pw("gredis")}}}
	case "mongodb":
		return m{
			"auth":    m{"rootPassword": pw("root"), "passwords": []any{pw("p1"), pw("p2")}, "password": pw("single"), "replicaSetKey": pw("rskey")},
			"metrics": m{"password": pw("metrics")},
		}
	case "rabbitmq":
		return m{"auth": m{"password": pw("amqp"), "erlangCookie": pw("cookie")}}
	default:
		return nil
	}
}

// merge returns base with overlay merged in; base's own settings win, so
// the overlay adds values without changing the variant.
func merge(base, overlay map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, ov := range overlay {
		bv, ok := out[k]
		if !ok {
			out[k] = ov
			continue
		}
		bm, bIsMap := bv.(map[string]any)
		om, oIsMap := ov.(map[string]any)
		if bIsMap && oIsMap {
			out[k] = merge(bm, om)
		}
	}
	return out
}

// TestNoPasswordLiteral sets every password value the charts accept and
// checks that the exports do not change and that no export, env var or
// checksum input holds a password literal.
func TestNoPasswordLiteral(t *testing.T) {
	t.Parallel()
	for _, tc := range variants() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := ForAddon(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			in := tc.in
			in.Values = merge(tc.in.Values, passwordValues(tc.in.Type))
			got, err := ForAddon(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("password values changed the exports (-without +with):\n%s", diff)
			}
			var env []EnvVar
			for key, e := range got {
				env = append(env, Wire("APP_"+strings.ToUpper(key), e)...)
			}
			out, err := json.Marshal(struct {
				Exports map[string]Export
				Env     []EnvVar
			}{got, env})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), secretMarker) {
				t.Errorf("a password literal reached the output: %s", out)
			}
		})
	}
}

// TestSensitiveExportsHoldNoValue checks that every credential export is a
// Secret reference or composed from one, never a literal.
func TestSensitiveExportsHoldNoValue(t *testing.T) {
	t.Parallel()
	for _, tc := range variants() {
		got, err := ForAddon(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for key, e := range got {
			secretParts := 0
			for _, p := range e.Parts {
				if p.Secret != nil {
					secretParts++
				}
			}
			switch {
			case key == KeyPassword && (e.Kind != Secret || e.Value != ""):
				t.Errorf("%s: password export is %v", tc.name, e.Kind)
			case e.Sensitive != (e.Kind == Secret || secretParts > 0):
				t.Errorf("%s: %s Sensitive = %v for kind %v with %d secret parts", tc.name, key, e.Sensitive, e.Kind, secretParts)
			}
		}
	}
}
