package webhook

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetwright/fleetwright/internal/probe"
)

// clusterClients are the clients of one cluster the webhook reads: its
// own (Config.Cluster and the rest) or one of Config.Clusters. A field is
// nil when the cluster is not read that way.
type clusterClients struct {
	// name is the cluster's name in platform.yaml ("" for the webhook's
	// own without -cluster-name).
	name    string
	reader  client.Reader
	kube    kubernetes.Interface
	metrics metricsclient.Interface
	prober  probe.Checker
}

// clusterOf returns the clients of the cluster an environment runs on:
// the webhook's own when the environment runs there or where it runs is
// not known (otherCluster says ""), the one of Config.Clusters that
// otherCluster names otherwise. When the webhook reads no such cluster it
// returns nil and the cluster's name (unread): this cluster's objects of
// the app's names are then another environment's, and nothing of the app
// is read from any cluster.
//
// Every reader of a cluster for an app in an environment asks this
// function: the checks (tracker), the app page's pods, events, logs and
// use, the API's, and the artifact revisions of its events.
func (s *Server) clusterOf(env string) (c *clusterClients, unread string) {
	other := s.otherCluster(env)
	if other == "" {
		return s.home, ""
	}
	if c := s.clusters[other]; c != nil {
		return c, ""
	}
	return nil, other
}

// proberOf returns the checker of env's cluster, nil when the webhook
// reads none there (unread names the cluster it runs on, if another).
func (s *Server) proberOf(env string) (p probe.Checker, unread string) {
	c, unread := s.clusterOf(env)
	if c == nil {
		return nil, unread
	}
	return c.prober, ""
}

// notRead says that an environment runs on a cluster the webhook does not
// read, and which it reads.
func (s *Server) notRead(cluster string) string {
	if len(s.clusters) == 0 {
		return "runs on cluster " + cluster + ", not this webhook's " + s.pages.cfg.ClusterName
	}
	read := append([]string{s.pages.cfg.ClusterName}, slices.Sorted(maps.Keys(s.clusters))...)
	return "runs on cluster " + cluster + ", which this webhook has no kubeconfig of (it reads " + strings.Join(read, ", ") + ")"
}
