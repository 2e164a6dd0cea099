package cluster

import (
	"log/slog"
	"os"
	"time"
)

// Option configures Start.
type Option func(*config)

type config struct {
	getenv                     func(string) string
	testclusterBin, clusterBin string
	logger                     *slog.Logger
	keepLogs                   bool
	startTimeout               time.Duration
	nodes                      int
	workDir                    string
	fluxArgs                   map[string][]string
	fluxEnv                    map[string][]string
	shards                     []string
	noLockdown                 bool
}

func defaultConfig() config {
	return config{
		getenv:       os.Getenv,
		logger:       slog.New(slog.DiscardHandler),
		startTimeout: 2 * time.Minute,
		nodes:        1,
	}
}

// WithGetenv sets how environment variables are read when the binaries'
// folders are looked up (see BinDirs). The default is os.Getenv.
func WithGetenv(getenv func(string) string) Option {
	return func(c *config) {
		if getenv != nil {
			c.getenv = getenv
		}
	}
}

// WithBinDirs runs kube-apiserver and etcd from testclusterBin (what
// hack/testcluster/build.sh prints) and everything else from clusterBin
// (what hack/cluster/build.sh prints), instead of looking them up through
// the environment. An empty argument keeps the lookup for that folder.
func WithBinDirs(testclusterBin, clusterBin string) Option {
	return func(c *config) {
		c.testclusterBin, c.clusterBin = testclusterBin, clusterBin
	}
}

// WithLogger sets the logger for progress messages (one per process started
// and per step of the start). The default discards them.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithKeepLogs makes Stop leave the cluster's folder (logs, etcd data,
// kubeconfig, source-controller's artifacts) on disk; Stop's caller is then
// told where it is through the logger.
func WithKeepLogs(keep bool) Option {
	return func(c *config) { c.keepLogs = keep }
}

// WithStartTimeout bounds Start as a whole, on top of the context passed to
// it. The default is two minutes; a warm start takes a few seconds.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.startTimeout = d
		}
	}
}

// WithNodes sets how many fake Nodes kwok manages (default 1). Each has
// ample capacity and no taint, so one is enough unless a test spreads pods.
func WithNodes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.nodes = n
		}
	}
}

// WithWorkDir puts the cluster's folder (a new folder made inside dir) under
// dir instead of the system's temporary folder.
func WithWorkDir(dir string) Option {
	return func(c *config) { c.workDir = dir }
}

// WithFluxArgs adds flags to one of Flux's controllers, by its process name
// (source-controller, kustomize-controller, notification-controller,
// helm-controller; for kustomize-controller they go to every shard too).
// Without it the controllers run with Flux's default flags, as users run
// them: a Kustomization whose dependencies are not ready is retried after
// 30s. Tests that want a chain applied at test speed pass, for example,
// WithFluxArgs("kustomize-controller", "--requeue-dependency=2s").
func WithFluxArgs(controller string, args ...string) Option {
	return func(c *config) { c.fluxArgs = appendTo(c.fluxArgs, controller, args) }
}

// WithFluxEnv adds environment variables (NAME=value) to one of Flux's
// controllers, by its process name as for WithFluxArgs (for
// kustomize-controller they go to every shard too): the Go runtime's
// settings a platform team patches into Flux's Deployments, such as GOGC
// and GOMEMLIMIT.
func WithFluxEnv(controller string, env ...string) Option {
	return func(c *config) { c.fluxEnv = appendTo(c.fluxEnv, controller, env) }
}

// appendTo appends values to m's list under key, making m when it is nil.
func appendTo(m map[string][]string, key string, values []string) map[string][]string {
	if m == nil {
		m = map[string][]string{}
	}
	m[key] = append(m[key], values...)
	return m
}

// WithKustomizeShards runs one more kustomize-controller per key, named
// kustomize-controller-<key>, that reconciles only the Kustomizations
// labelled sharding.fluxcd.io/key=<key> (Flux's sharding); the main
// kustomize-controller then reconciles only those without the label.
func WithKustomizeShards(keys ...string) Option {
	return func(c *config) { c.shards = append(c.shards, keys...) }
}

// WithoutLockdown runs kustomize- and helm-controller without Flux's
// multi-tenancy lockdown (LockdownArgs), which they run with by default,
// as docs/cluster.md tells platform teams to run them: for a test of a
// fleet that reads the fleet's GitRepository from the projects'
// namespaces (which --no-cross-namespace-refs refuses), or of a fleet as
// a layout before the per-project namespaces wrote it (Flux objects in
// flux-system that name no service account, which
// --default-service-account runs as the namespace's default one).
func WithoutLockdown() Option {
	return func(c *config) { c.noLockdown = true }
}
