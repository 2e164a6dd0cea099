package build

import (
	"debug/elf"
	"fmt"
	"os"
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

// sandboxInit finds the pid 1 of RUN containers once: LocalOptions.Init,
// else the builder's own executable when it is statically linked (a
// dynamically linked one would need the host's loader and libraries in
// the container); "" when there is none.
func (l *Local) sandboxInit() string {
	l.initOnce.Do(func() {
		if l.initOpt != "" {
			l.initPath = l.initOpt
			return
		}
		exe, err := os.Executable()
		if err != nil {
			return
		}
		if static, err := isStatic(exe); err == nil && static {
			l.initPath = exe
		}
	})
	return l.initPath
}

// isStatic reports whether the ELF executable at p needs no program
// interpreter (the dynamic loader).
func isStatic(p string) (bool, error) {
	f, err := elf.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// noLimitsNote says once, in the build log, that without root the RUN
// limits are not applied: no cgroup can be made.
func (l *Local) noLimitsNote() {
	if !l.ids.rootless {
		return
	}
	l.limitsOnce.Do(func() {
		const msg = "RUN runs without root: no cgroup can be made, so platform.yaml build.limits (memory, pids, cpus) are not applied; the build timeout is. Run render as root to apply them"
		l.log.Warn(msg)
		if l.output != nil {
			fmt.Fprintln(l.output, msg)
		}
	})
}
