package registry

import (
	"context"

	"github.com/google/go-containerregistry/pkg/authn"
)

// GitHubRegistry is the registry host a GitHub token authenticates to.
const GitHubRegistry = "ghcr.io"

// GitHubCredentials authenticate to ghcr.io. Token is a GitHub token with
// the packages scope (in Actions, the workflow's GITHUB_TOKEN); the caller
// reads it, this package never does. Username may be any non-empty name for
// a token; it defaults to "fleetwright".
type GitHubCredentials struct {
	Username string
	Token    string
}

// Keychain returns a keychain that answers ghcr.io with the GitHub token
// (when one is given) and every other registry, or ghcr.io without a token,
// from base. Pass authn.DefaultKeychain as base for the Docker configuration
// and its credential helpers; nil base means anonymous.
func Keychain(base authn.Keychain, gh GitHubCredentials) authn.Keychain {
	var chain []authn.Keychain
	if gh.Token != "" {
		user := gh.Username
		if user == "" {
			user = "fleetwright"
		}
		chain = append(chain, &githubKeychain{auth: &tokenAuth{user: user, token: gh.Token}})
	}
	if base != nil {
		chain = append(chain, base)
	}
	return &redacted{inner: authn.NewMultiKeychain(chain...)}
}

// redacted wraps a keychain so that formatting it never shows a credential:
// its String and GoString hide the inner keychain, and the credentials
// inside sit behind pointers, which fmt prints as addresses.
type redacted struct{ inner authn.Keychain }

func (k *redacted) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.inner.Resolve(r)
}

func (k *redacted) ResolveContext(ctx context.Context, r authn.Resource) (authn.Authenticator, error) {
	return authn.Resolve(ctx, k.inner, r)
}

func (k *redacted) String() string   { return "keychain (credentials redacted)" }
func (k *redacted) GoString() string { return k.String() }

// githubKeychain resolves only ghcr.io.
type githubKeychain struct{ auth *tokenAuth }

func (k *githubKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), r)
}

func (k *githubKeychain) ResolveContext(_ context.Context, r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() != GitHubRegistry {
		return authn.Anonymous, nil
	}
	return k.auth, nil
}

// String and GoString keep the token out of any formatted output.
func (k *githubKeychain) String() string   { return "ghcr.io keychain (token redacted)" }
func (k *githubKeychain) GoString() string { return k.String() }

// tokenAuth is an authenticator whose formatted forms never show the token.
type tokenAuth struct{ user, token string }

func (a *tokenAuth) Authorization() (*authn.AuthConfig, error) {
	return &authn.AuthConfig{Username: a.user, Password: a.token}, nil
}

func (a *tokenAuth) String() string   { return "token for " + a.user + " (redacted)" }
func (a *tokenAuth) GoString() string { return a.String() }
