// Package github is the small part of GitHub's REST API that fleetwright
// uses, on go-github. For render: open or update the pull request of the
// fleet branch (EnsurePullRequest) and keep one comment per pull request up
// to date, found by a hidden marker (UpsertComment); both read first and
// write only when something differs, so reruns make no writes. For the
// webhook: create a deployment and post its statuses (DeploymentReporter).
//
// The base URL, HTTP client and token are injected (Config); tests point
// the client at githubtest's fake server.
package github
