// Package github is the small part of GitHub's REST API that render uses,
// on go-github: open or update the pull request of the fleet branch
// (EnsurePullRequest) and keep one comment per pull request up to date,
// found by a hidden marker (UpsertComment). Both read first and write only
// when something differs, so reruns make no writes.
//
// The base URL, HTTP client and token are injected (Config); tests point
// the client at githubtest's fake server.
package github
