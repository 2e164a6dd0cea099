// Package cluster runs, on 127.0.0.1, a whole Kubernetes cluster in which
// the real Flux applies what fleetwright renders: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler (Kubernetes v1.37.2), kwok
// standing in for the kubelet on fake Nodes, and Flux's source-,
// kustomize-, notification- and helm-controller, all as plain processes
// with random free ports. It also serves a stand-in for the Bitnami
// postgresql Helm chart (StartChartRepo), since tests have no internet.
//
// # Binaries
//
// Start builds nothing. kube-apiserver and etcd come from
//
//	bash hack/testcluster/build.sh   # prints the folder; see internal/testenv
//
// and the rest from
//
//	bash hack/cluster/build.sh       # prints the folder
//
// both cached by version under ${FLEETWRIGHT_CACHE:-$HOME/.cache/fleetwright}.
// Start looks there, or in $FLEETWRIGHT_TESTCLUSTER_BIN and
// $FLEETWRIGHT_CLUSTER_BIN (see BinDirs), and fails, never skips, with a
// message naming both commands when something is missing. docs/cluster.md
// has the build and start times.
//
// # Use
//
//	func TestJourney(t *testing.T) {
//		c := cluster.StartT(t) // stopped by t.Cleanup; logs' tails printed if t failed
//		// c.Client (controller-runtime, Flux's kinds registered), c.Config,
//		// c.Kubeconfig (a file) for CLIs, c.EventsURL, c.LogDir.
//	}
//
// Start returns once the API server is ready, Flux's CRDs (from each
// controller's own module) are established, every Node is Ready and every
// other process answers its health endpoint. The namespace flux-system
// exists; the controllers watch all namespaces. A Deployment applied by
// Flux becomes Available in well under a second: the scheduler places its
// pods on a kwok Node and kwok marks them Running and Ready (no container
// runs). ForwardEvents points notification-controller's events at a URL.
//
// # Differences from a production cluster
//
//   - No container runtime, network or storage: kwok fakes pod status and
//     pod IPs; PersistentVolumeClaims stay Pending.
//   - Leader election is off everywhere. Flux's controllers otherwise run
//     with their default flags (a dependency that is not ready is retried
//     after 30s) and, kustomize- and helm-controller, with Flux's
//     multi-tenancy lockdown (LockdownArgs: --no-cross-namespace-refs=true,
//     --default-service-account=default), as docs/cluster.md tells
//     platform teams to run them; a root Kustomization then names
//     RootServiceAccount, as the flux-system one does. WithoutLockdown
//     leaves the lockdown out, WithFluxArgs adds flags,
//     WithKustomizeShards runs kustomize-controller shards.
//   - The controllers run as the kubeconfig's admin; Start adds what
//     Flux's install adds for its RBAC: the service accounts
//     kustomize-controller and helm-controller bound to cluster-admin, and
//     the ClusterRoles flux-edit and flux-view aggregated into admin, edit
//     and view.
//   - The admin credential is a static bearer token (system:masters), in
//     the kubeconfig file only; the control plane's serving certificate and
//     service-account key are made fresh by each Start.
//
// # Processes
//
// Each process runs in its own process group with its output in
// LogDir/<name>.log. Stop ends them all (SIGTERM, then SIGKILL) and removes
// the cluster's folder unless WithKeepLogs. On Linux the kernel also kills
// them if the test process dies first (a -timeout panic), so none outlives
// the test binary. The package builds on Unix systems only.
package cluster
