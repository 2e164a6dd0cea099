package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// binDir holds render, verify and webhook, built once by TestMain for every
// test of the package; it is set before any test runs and never changed.
var binDir string

func TestMain(m *testing.M) {
	// The clients of this process log nothing worth reading; the programs
	// under test and the cluster's processes log to their own files.
	ctrllog.SetLogger(logr.Discard())
	code, err := buildAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// buildAndRun builds the three programs as a user would get them and runs
// the tests.
func buildAndRun(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "fleetwright-e2e-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	goBin, err := exec.LookPath("go")
	if err != nil {
		return 0, fmt.Errorf("the go command builds the programs under test: %w", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(goBin, "build", "-o", dir+string(filepath.Separator), "./cmd/render", "./cmd/verify", "./cmd/webhook")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build: %w\n%s", err, out)
	}
	binDir = dir
	return m.Run(), nil
}
