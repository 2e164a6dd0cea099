package build

import (
	"os/exec"
)

// runtimePath finds the OCI runtime once: LocalOptions.Runtime, else runc,
// else crun, on PATH.
func (l *Local) runtimePath() (string, error) {
	l.rtOnce.Do(func() {
		names := []string{"runc", "crun"}
		if l.runtime != "" {
			names = []string{l.runtime}
		}
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				l.rtPath = p
				return
			}
		}
		l.rtErr = runtimeMissing(names)
	})
	return l.rtPath, l.rtErr
}
