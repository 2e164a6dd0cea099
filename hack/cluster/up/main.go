// Command up starts the whole test cluster of test/cluster by hand, prints
// how to reach it and keeps it running until interrupted. Run it through
// hack/cluster/up.sh, which builds the binaries first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fleetwright/fleetwright/test/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "up: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keep := fs.Bool("keep", false, "keep the cluster's folder (logs, data) after it stops")
	nodes := fs.Int("nodes", 1, "number of fake Nodes")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long the start may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	began := time.Now()
	c, err := cluster.Start(ctx,
		cluster.WithLogger(logger), cluster.WithKeepLogs(*keep),
		cluster.WithNodes(*nodes), cluster.WithStartTimeout(*timeout))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Stop()) }()
	repo, stopRepo, err := cluster.StartChartRepo(ctx)
	if err != nil {
		return err
	}
	defer stopRepo()

	fmt.Fprintf(stdout, `Cluster ready in %s: Kubernetes %s, kwok %s, Flux source-controller %s,
kustomize-controller %s, notification-controller %s, helm-controller %s.

  export KUBECONFIG=%s
  kubectl get nodes

  Flux events address:           %s
  stand-in postgresql chart repo: %s (chart postgresql %s)
  logs, one file per process:    %s

Press Ctrl-C to stop and clean up.
`, time.Since(began).Round(100*time.Millisecond), cluster.KubeVersion, cluster.KwokVersion,
		cluster.SourceControllerVersion, cluster.KustomizeControllerVersion,
		cluster.NotificationControllerVersion, cluster.HelmControllerVersion,
		c.Kubeconfig, c.EventsURL, repo, cluster.PostgreSQLChartVersion, c.LogDir)

	<-ctx.Done()
	fmt.Fprintln(stderr, "stopping")
	return nil
}
