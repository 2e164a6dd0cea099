// Command render validates app specs and renders them into a Flux fleet.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// Root certificates for when the system has none (the container image
	// is FROM scratch); the system's own are used wherever they exist.
	_ "golang.org/x/crypto/x509roots/fallback"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
