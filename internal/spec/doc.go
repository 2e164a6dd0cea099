// Package spec defines the app.yaml and platform.yaml specs, loads them from
// an apps repository (a folder or a Git tree), validates them against the
// committed JSON Schema and the semantic rules, and builds the component
// graph.
//
// Every problem points into the user's file:
//
//	apps/shop/my-api/app.yaml:14:9: components[1].workload_spec.port: must be ≤ 65535; got 70000
//
// Positions come from the YAML node of the offending field, for JSON specs
// too, and all problems of all files are reported at once.
package spec
