// Package githubtest is a strict fake of the GitHub REST API endpoints the
// github package calls (pull requests, issue comments, deployments and
// deployment statuses), served by httptest. A test tells the server which
// calls to expect; any other request fails the test and gets a 500, and an
// expected call that was not made fails the test at cleanup. The server keeps pull requests, comments
// and deployments in memory and answers with GitHub-shaped JSON, paginated
// with Link headers, and records every request so that a test can assert
// that a rerun made no writes.
package githubtest
