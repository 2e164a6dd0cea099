package spec

// Severity is how much a platform policy's finding counts: an error fails
// validate and render, a warning is reported, PolicyOff skips the check.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)
