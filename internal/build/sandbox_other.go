//go:build !linux

package build

import (
	"context"
	"errors"
	"io"
)

// errNoSandbox is returned for RUN on systems other than Linux.
var errNoSandbox = errors.New("RUN needs Linux namespaces; build on Linux or configure build.external in platform.yaml")

func runSandbox(ctx context.Context, spec sandboxSpec, out io.Writer) (int, error) {
	return 0, errNoSandbox
}

func sandboxInit() int { return 125 }
