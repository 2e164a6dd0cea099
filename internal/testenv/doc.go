// Package testenv runs a real Kubernetes API server (etcd plus kube-apiserver
// v1.37.2, through controller-runtime's envtest) with Flux's CRDs installed,
// for tests that talk to a cluster.
//
// # Binaries
//
// The server binaries are built from the Go module proxy, once per machine, by
//
//	bash hack/testcluster/build.sh
//
// which compiles kube-apiserver from k8s.io/kubernetes v1.37.2 and etcd v3.7.0
// in the separate module hack/testcluster (about four minutes and 2.4 GB of
// memory cold; instant once cached) into
//
//	${FLEETWRIGHT_CACHE:-$HOME/.cache/fleetwright}/testcluster/v1.37.2/
//
// and prints that folder as its last line. Start looks there, or in
// $FLEETWRIGHT_TESTCLUSTER_BIN when it is set (see BinDir). When the binaries
// are missing Start returns an error that says to run build.sh: tests fail,
// they never skip.
//
// # CRDs
//
// The CustomResourceDefinitions of Flux's kustomize.toolkit.fluxcd.io/v1,
// source.toolkit.fluxcd.io/v1 and helm.toolkit.fluxcd.io/v2 kinds are
// generated from Flux's Go API modules by
//
//	bash hack/crds/gen.sh
//
// into crds/, embedded in this package, and installed by Start, which waits
// until they are established and served. `bash hack/crds/gen.sh -check`
// fails when the committed copies are stale.
//
// # Aggregation layer
//
// Start gives the API server the flags of its aggregation layer, as kubeadm
// does: a front-proxy CA it trusts for request headers
// (--requestheader-client-ca-file and the --requestheader-* names) and the
// client certificate signed by it that it presents to the servers it
// proxies to (--proxy-client-cert-file, common name FrontProxyClientName),
// made afresh at each start (ECDSA, in milliseconds). Env.ServeMetrics runs
// a metrics.k8s.io/v1beta1 server in the test process and registers it with
// an APIService (its Service is an ExternalName one naming localhost, which
// the aggregation layer resolves without any endpoints), so that clients
// read PodMetrics through the API server as from metrics-server; the
// APIService is cluster-wide, so a test that serves metrics starts an Env
// of its own.
//
// # Use
//
// One server per test binary, one namespace per test:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		ns := env.Namespace(t)
//		// env.Client (controller-runtime, with Flux's kinds registered),
//		// env.Dynamic, env.Config, env.KubeconfigFile(t) for CLIs,
//		// env.DryRunApply(ctx, yaml) for strict server-side validation.
//	}
//
// The server runs no controllers: no controller-manager, scheduler or
// kubelet, and no Flux controllers. A Deployment never gets a status by
// itself (write it through the status subresource to simulate a rollout),
// and a deleted namespace never finishes terminating, so tests share the
// server by each working in its own namespace from Namespace.
package testenv
