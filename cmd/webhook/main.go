// Command webhook receives Flux events, records deployment history, probes
// each app and serves its status. See docs/webhook.md.
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
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(cli.CodeAs("webhook", err, os.Stderr))
}
