package build

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// runWorkDir is a work folder for RUN builds: the test's temporary
// folder, whose parent (the test's own, mode 0700) is made searchable so
// that, as root, the user namespace's root reaches the root filesystems
// (see makeWorkDir).
func runWorkDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sandboxInitEnv passes the static pid 1 built for the tests on to the
// test binary re-run as another user.
const sandboxInitEnv = "FLEETWRIGHT_TEST_SANDBOX_INIT"

var sandboxInitOnce struct {
	sync.Once
	dir, path string
	err       error
}

// sandboxInitProgram builds testdata/sandboxinit, static, once per test
// process, for LocalOptions.Init: the test binary itself is linked
// dynamically, as a cgo build of render is, and cannot be a container's
// pid 1.
func sandboxInitProgram(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(sandboxInitEnv); p != "" {
		return p
	}
	sandboxInitOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fleetwright-init-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			sandboxInitOnce.err = err
			return
		}
		sandboxInitOnce.dir = dir
		out := filepath.Join(dir, "init")
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, "./testdata/sandboxinit")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			sandboxInitOnce.err = fmt.Errorf("building testdata/sandboxinit: %v\n%s", err, b)
			return
		}
		sandboxInitOnce.path = out
		os.Setenv(sandboxInitEnv, out)
	})
	if sandboxInitOnce.err != nil {
		t.Fatal(sandboxInitOnce.err)
	}
	return sandboxInitOnce.path
}

// withRuntimeInit makes l run RUN the other way, the runtime's init as
// pid 1 and the command executed beside it, as a dynamically linked
// builder without LocalOptions.Init does.
func withRuntimeInit(l *Local) *Local {
	l.initOnce.Do(func() {})
	return l
}
