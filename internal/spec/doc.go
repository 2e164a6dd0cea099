// Package spec holds the types of the app.yaml and platform.yaml specs,
// their constants, and what follows from a spec alone (an ingress's routes
// and port, a project's defaults, a policy's severity). It imports nothing
// of the project: the loader (spec/load) reads files into these types and
// the checks (spec/validate) judge them.
package spec
