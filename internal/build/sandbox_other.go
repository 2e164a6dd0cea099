//go:build !linux

package build

import (
	"context"
	"errors"
	"io"
	"sync"
)

// errNoSandbox is returned for RUN on systems other than Linux.
var errNoSandbox = errors.New("RUN needs Linux and an OCI runtime (runc or crun); build on Linux or configure build.external in platform.yaml")

func runSandbox(ctx context.Context, rt, state string, spec sandboxSpec, out io.Writer, bg *sync.WaitGroup) (sandboxResult, error) {
	return sandboxResult{}, errNoSandbox
}
