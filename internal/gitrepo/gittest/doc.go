// Package gittest runs a real git smart-HTTP server on loopback for tests:
// the git CLI's http-backend behind net/http/cgi, with pushes enabled and
// optional basic authentication, plus helpers that create bare repositories
// and commits with the git CLI in a hermetic environment.
package gittest
