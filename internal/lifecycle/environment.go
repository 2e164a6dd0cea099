package lifecycle

import (
	"fmt"
	"strings"

	"github.com/fleetwright/fleetwright/internal/spec"
)

// environmentCluster returns the cluster environment env deploys to: an
// environment is a cluster, and each environment's fleet files are its
// cluster's (clusters/<cluster>/, apps/<cluster>/), so a verb about one
// environment touches no other's. A platform that lists environments
// (platform.yaml environments[].cluster) names the cluster of each; one
// that does not names each environment by its cluster.
func environmentCluster(p *spec.Platform, env string) (string, error) {
	var names []string
	for _, c := range p.Clusters {
		if c.Name == env {
			return c.Name, nil
		}
		names = append(names, c.Name)
	}
	return "", refuse("no environment %q on the platform (its clusters: %s)", env, strings.Join(names, ", "))
}

// inEnvironment names the app in the environment, as messages show it.
func inEnvironment(name, env string) string {
	if env == "" {
		return name
	}
	return fmt.Sprintf("%s in %s", name, env)
}
