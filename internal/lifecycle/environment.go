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
	if len(p.Environments) > 0 {
		if e := p.EnvironmentByName(env); e != nil {
			return e.Cluster, nil
		}
		return "", refuse("no environment %q on the platform (its environments: %s)", env, strings.Join(p.EnvironmentNames(), ", "))
	}
	var names []string
	for _, c := range p.Clusters {
		if c.Name == env {
			return c.Name, nil
		}
		names = append(names, c.Name)
	}
	return "", refuse("no environment %q on the platform (its clusters: %s)", env, strings.Join(names, ", "))
}

// promotedOnly refuses a change of the app's spec aimed at an environment
// that only promotion changes (promote_from): the spec is every
// environment's, and such an environment keeps its release until the next
// promotion, so the change would reach the environments rendered from the
// apps repository instead.
func promotedOnly(p *spec.Platform, env, app string) error {
	e := p.EnvironmentByName(env)
	if e == nil || e.PromoteFrom == "" {
		return nil
	}
	return refuse("environment %s changes only by promotion (promote_from: %s): roll %s back in %s, let it run there, then render promote %s --to %s",
		env, e.PromoteFrom, app, e.PromoteFrom, app, env)
}

// inEnvironment names the app in the environment, as messages show it.
func inEnvironment(name, env string) string {
	if env == "" {
		return name
	}
	return fmt.Sprintf("%s in %s", name, env)
}
