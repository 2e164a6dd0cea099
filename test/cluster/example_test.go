package cluster_test

import (
	"context"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"

	"github.com/fleetwright/fleetwright/test/cluster"
)

// Start runs the cluster from the binaries the build scripts cached; Stop
// ends every process. In a test, StartT does both.
func Example() {
	ctx := context.Background()
	c, err := cluster.Start(ctx)
	if err != nil {
		log.Fatal(err) // names the build commands when binaries are missing
	}
	defer c.Stop()

	var nodes corev1.NodeList
	if err := c.Client.List(ctx, &nodes); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(nodes.Items), "node; kubeconfig at", c.Kubeconfig)
}

// StartChartRepo serves the stand-in postgresql chart for a HelmRepository.
func ExampleStartChartRepo() {
	url, stop, err := cluster.StartChartRepo(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	fmt.Println("HelmRepository spec.url:", url)
	fmt.Println("chart:", cluster.PostgreSQLChartName, cluster.PostgreSQLChartVersion)
}
