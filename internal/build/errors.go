package build

import (
	"fmt"
)

// UnsupportedError reports a Dockerfile instruction that the daemonless
// builder cannot execute, at its line. Fallback hands such builds to the
// external builder.
type UnsupportedError struct {
	File        string // Dockerfile path as shown to the user
	Line        int
	Instruction string // e.g. "RUN", "ADD <url>"
	Reason      string // e.g. "needs a container runtime"
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s:%d: %s %s; configure build.external in platform.yaml", e.File, e.Line, e.Instruction, e.Reason)
}

// DockerfileError is a mistake in a Dockerfile or in what it refers to, at
// its line (0 when the whole file is concerned).
type DockerfileError struct {
	File string
	Line int
	Err  error
}

func (e *DockerfileError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *DockerfileError) Unwrap() error { return e.Err }
