// Package e2e holds fleetwright's whole-journey test: a team's app goes from
// a spec on a branch to a running, probed, reported deployment and back out
// of the cluster, with every part real except GitHub's API.
//
// TestJourney builds render, verify and webhook once (TestMain) and runs
// them as a user and CI would: against apps and fleet repositories served
// over smart HTTP on loopback (internal/gitrepo/gittest), an OCI registry
// (internal/registry/registrytest), a Helm repository holding a stand-in of
// the postgresql chart and a cluster of real Kubernetes control-plane
// processes, kwok for the nodes and Flux's controllers (test/cluster), with
// a strict fake of GitHub's REST API (internal/github/githubtest). Each step
// of the journey logs "--- step N: …" when it passes; docs/journey.md tells
// the same story for a reader.
//
// TestRealAppJourney runs, on the same kind of cluster, an app whose
// migration job must complete before its api is applied, whose store is a
// StatefulSet on a bound claim, and whose api reads a config file and has a
// gRPC probe; then a changed job runs again and a changed file rolls the
// api (see realapp_test.go for what kwok stands in for). Its fleet has a
// source per project and per component, and the webhook follows both
// deployments to running.
//
// TestEnvironmentsJourney runs staging and production on two such
// clusters, each with its own Flux under its multi-tenancy lockdown (the
// fleet's sources are artifacts), and one webhook reading both
// (-cluster-kubeconfig): a merge deploys staging only; render promote,
// once the webhook saw staging's release running with every check green,
// opens the promotion pull request (the strict GitHub fake checks it and
// its comment); merged, production runs exactly staging's digests,
// checked on its own cluster and through its own ingress, and GitHub's
// deployments carry the environments' names; a release that fails in
// staging leaves production as it is, and its promotion is refused.
//
// TestPreviewJourney follows pull requests' previews (render preview) on
// the same kind of cluster: deployed in their preview namespaces, seen
// running at their preview hosts by the webhook, reported as transient
// GitHub deployments on the apps repository with the review comment's
// preview section kept up to date, updated by a second push, and pruned,
// namespaces included, when a pull request closes or previews.ttl passes.
//
// The migration tests switch a running fleet between layouts on the real
// controllers, and TestFixCancelsHealthCheck shows the kustomize-controller
// feature gate docs/fleet.md recommends at work: a fix committed while Flux
// health-checks a broken revision is applied when its artifact arrives.
//
// The cluster's binaries are built once per machine by
//
//	bash hack/testcluster/build.sh
//	bash hack/cluster/build.sh
//
// (hack/test.sh runs both); the test fails, never skips, without them.
package e2e
