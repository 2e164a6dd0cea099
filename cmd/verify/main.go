// Command verify guards a fleet repository: it re-renders the specs and
// compares, builds every Flux path, validates every object against its API
// type, and runs the secret and policy gates; with a cluster, it also
// dry-runs every object and reports live drift.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fleetwright/fleetwright/internal/cli"

	// Root certificates for when the system has none (the container image
	// is FROM scratch); the system's own are used wherever they exist.
	_ "golang.org/x/crypto/x509roots/fallback"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], stdio{out: os.Stdout, err: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(cli.Code(err, os.Stderr))
}
