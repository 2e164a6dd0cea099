// Package load reads an apps repository (a folder or a Git tree) into the
// spec types: platform.yaml and every apps/**/app.yaml, their config files
// and templates, each environment's and each preview's copy of an app, and
// the component graph. It checks the files against the committed JSON
// Schema and keeps each value's position, so that a problem points into the
// user's file:
//
//	apps/shop/my-api/app.yaml:14:9: components[1].workload_spec.port: must be ≤ 65535; got 70000
//
// Positions come from the YAML node of the offending field, for JSON specs
// too, and all problems of all files are reported at once. The checks of
// what was read beyond the schema are a Checks, given to the loader
// (validate.NewLoader gives the project's).
package load
