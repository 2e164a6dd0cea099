package registry_test

import (
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fleetwright/fleetwright/internal/registry"
)

func TestKeychain(t *testing.T) {
	t.Parallel()
	const token = "ghp_exampletokenvalue0123456789"
	base := staticKeychain{"docker-user", "docker-pass"}
	tests := []struct {
		name     string
		base     authn.Keychain
		gh       registry.GitHubCredentials
		registry string
		want     authn.AuthConfig
	}{
		{"ghcr with token", base, registry.GitHubCredentials{Token: token}, "ghcr.io", authn.AuthConfig{Username: "fleetwright", Password: token}},
		{"ghcr with user", base, registry.GitHubCredentials{Username: "octo", Token: token}, "ghcr.io", authn.AuthConfig{Username: "octo", Password: token}},
		{"other registry uses base", base, registry.GitHubCredentials{Token: token}, "registry.example.com", authn.AuthConfig{Username: "docker-user", Password: "docker-pass"}},
		{"ghcr without token uses base", base, registry.GitHubCredentials{}, "ghcr.io", authn.AuthConfig{Username: "docker-user", Password: "docker-pass"}},
		{"nothing is anonymous", nil, registry.GitHubCredentials{}, "ghcr.io", authn.AuthConfig{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg, err := name.NewRegistry(tt.registry)
			if err != nil {
				t.Fatal(err)
			}
			auth, err := registry.Keychain(tt.base, tt.gh).Resolve(reg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := auth.Authorization()
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.want {
				t.Errorf("Authorization() = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestKeychainNeverFormatsToken(t *testing.T) {
	t.Parallel()
	const token = "ghp_exampletokenvalue0123456789"
	kc := registry.Keychain(nil, registry.GitHubCredentials{Token: token})
	reg, _ := name.NewRegistry("ghcr.io")
	auth, err := kc.Resolve(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{kc, auth} {
			if s := fmt.Sprintf(verb, v); contains(s, token) {
				t.Errorf("fmt %s of %T shows the token: %s", verb, v, s)
			}
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
