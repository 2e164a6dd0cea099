// Package registry resolves container image references against OCI
// registries: it pins a tag to its manifest digest
// (`name:tag@sha256:...`), checks whether an image exists, and pins many
// references at once with a bounded number of requests in flight.
//
// Credentials come from an [authn.Keychain] chosen by the caller; [Keychain]
// combines the Docker configuration keychain with a GitHub token for ghcr.io.
// The package reads no environment variables and never logs or prints a
// credential.
//
// Errors name the image they concern. A registry that cannot be reached is
// reported as an [*UnreachableError]; an image that is not there matches
// [ErrNotFound] with errors.Is.
package registry
