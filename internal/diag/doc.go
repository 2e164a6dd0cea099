// Package diag is how the commands report what is wrong: a Diagnostic
// points into a user's file (file, line, column, field path) with a severity
// and a message, and a Writer prints a list of them as text, as JSON, and in
// GitHub Actions also as annotations on the lines they name, within the
// limits GitHub puts on annotations. Diagnostic is the one type of a
// problem: spec's, template's and tenancy's problems and a preview's are
// Diagnostics, and verify's findings embed one.
//
// It also turns JSON Schema validation errors into messages (Schema), for
// the spec and template packages, which both validate against schemas.
package diag
