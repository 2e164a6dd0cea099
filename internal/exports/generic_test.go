package exports

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func generic(decl ...Declared) AddonInput {
	return AddonInput{Type: Generic, Release: "app-search", Namespace: "shop", Declared: decl}
}

func TestGenericExports(t *testing.T) {
	t.Parallel()
	pw := &SecretKeyRef{Name: "search-auth", Key: "password"}
	tok := &SecretKeyRef{Name: "search-auth", Key: "api.token"}
	tests := []struct {
		name string
		decl []Declared
		want map[string]Export
	}{
		{
			name: "literal, secret and composed",
			decl: []Declared{
				{Key: "host", Value: "search.shop.svc.cluster.local", Description: "search host"},
				{Key: "password", Secret: pw},
				{Key: "url", Value: "https://elastic:$(password)@$(host):9200"},
			},
			want: map[string]Export{
				"host":     {Key: "host", Kind: Plain, Value: "search.shop.svc.cluster.local", Description: "search host"},
				"password": {Key: "password", Kind: Secret, Sensitive: true, Secret: pw},
				"url": {Key: "url", Kind: Composed, Sensitive: true, Parts: []Part{{Name: "PASSWORD", Secret: pw}},
					Template: "https://elastic:$(PASSWORD)@search.shop.svc.cluster.local:9200"},
			},
		},
		{
			name: "reference declared later, used twice, key renamed",
			decl: []Declared{
				{Key: "both", Value: "$(api.token)/$(api.token)"},
				{Key: "api.token", Secret: tok},
			},
			want: map[string]Export{
				"both":      {Key: "both", Kind: Composed, Sensitive: true, Parts: []Part{{Name: "API_TOKEN", Secret: tok}}, Template: "$(API_TOKEN)/$(API_TOKEN)"},
				"api.token": {Key: "api.token", Kind: Secret, Sensitive: true, Secret: tok},
			},
		},
		{
			name: "escapes and plain-only references",
			decl: []Declared{
				{Key: "price", Value: "$$5 and $$(not_a_ref) and a lone $ and $(unclosed"},
				{Key: "port", Value: "9200"},
				{Key: "addr", Value: "host:$(port) costs $(price)"},
			},
			want: map[string]Export{
				"price": {Key: "price", Kind: Plain, Value: "$5 and $(not_a_ref) and a lone $ and $(unclosed"},
				"port":  {Key: "port", Kind: Plain, Value: "9200"},
				"addr":  {Key: "addr", Kind: Plain, Value: "host:9200 costs $5 and $(not_a_ref) and a lone $ and $(unclosed"},
			},
		},
		{
			name: "composed with literal dollars",
			decl: []Declared{
				{Key: "token", Secret: tok},
				{Key: "header", Value: "$$Bearer $(token)"},
			},
			want: map[string]Export{
				"token":  {Key: "token", Kind: Secret, Sensitive: true, Secret: tok},
				"header": {Key: "header", Kind: Composed, Sensitive: true, Parts: []Part{{Name: "TOKEN", Secret: tok}}, Template: "$$Bearer $(TOKEN)"},
			},
		},
		{name: "none", decl: nil, want: map[string]Export{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ForAddon(generic(tc.decl...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ForAddon (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenericComposedExpands(t *testing.T) {
	t.Parallel()
	got, err := ForAddon(generic(
		Declared{Key: "user", Value: "a$$b"},
		Declared{Key: "password", Secret: &SecretKeyRef{Name: "s", Key: "k"}},
		Declared{Key: "dsn", Value: "user=$(user) password=$(password) cost=$$(x)"},
	))
	if err != nil {
		t.Fatal(err)
	}
	env := Wire("DSN", got["dsn"])
	vals := container(t, env, func(SecretKeyRef) string { return "p$(HOME)w" })
	if want := "user=a$b password=p$(HOME)w cost=$(x)"; vals["DSN"] != want {
		t.Errorf("DSN = %q, want %q (env %+v)", vals["DSN"], want, env)
	}
}

func TestGenericErrors(t *testing.T) {
	t.Parallel()
	s := &SecretKeyRef{Name: "s", Key: "k"}
	tests := []struct {
		name string
		decl []Declared
		want string
	}{
		{"empty key", []Declared{{Key: ""}}, `declared export key ""`},
		{"bad key", []Declared{{Key: "a)b"}}, `declared export key "a)b"`},
		{"duplicate", []Declared{{Key: "a"}, {Key: "a"}}, `"a": declared twice`},
		{"value and secret", []Declared{{Key: "a", Value: "x", Secret: s}}, "either a value or a secret"},
		{"bad secret name", []Declared{{Key: "a", Secret: &SecretKeyRef{Name: "Bad", Key: "k"}}}, `Secret name "Bad"`},
		{"bad secret key", []Declared{{Key: "a", Secret: &SecretKeyRef{Name: "s", Key: "a/b"}}}, `Secret key "a/b"`},
		{"unknown reference", []Declared{{Key: "a", Value: "$(b)"}}, "$(b) is not a declared export"},
		{"self reference", []Declared{{Key: "a", Value: "x$(a)"}}, "refers to itself"},
		{"nested reference", []Declared{{Key: "a", Value: "$(b)"}, {Key: "b", Value: "$(c)"}, {Key: "c", Value: "1"}}, "itself refers to others"},
		{"empty reference", []Declared{{Key: "a", Value: "$()"}}, "$() is not a declared export"},
		{"part clash", []Declared{{Key: "db-pass", Secret: s}, {Key: "db_pass", Secret: s}, {Key: "u", Value: "$(db-pass)$(db_pass)"}}, "share the hidden variable suffix DB_PASS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ForAddon(generic(tc.decl...))
			if err == nil {
				t.Fatalf("ForAddon = %v, want error containing %q", got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestGenericLookup(t *testing.T) {
	t.Parallel()
	_, err := Lookup(generic(Declared{Key: "url", Value: "x"}, Declared{Key: "host", Value: "y"}), "port")
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "(valid: host, url)") {
		t.Errorf("error = %v", err)
	}
}
