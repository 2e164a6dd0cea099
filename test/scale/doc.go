// Package scale measures what a rendered fleet costs Flux: the real
// controllers of test/cluster, with Flux's default flags unless told
// otherwise, apply N synthetic apps that render wrote and committed to a
// git server on loopback, then one app's image changes. BenchmarkFleet
// reports, per shape and N:
//
//   - ready-s: from Flux's fetch of the first commit to every Kustomization
//     Ready at it;
//   - change-s: from Flux's fetch of a commit that changes one component's
//     image to that app's Kustomizations Ready at it and its Deployment
//     rolled out;
//   - settle-s: from that fetch until every Kustomization has handled the
//     commit (the commit's whole cost);
//   - fetch-s: from the push's notification to notification-controller's
//     Receiver (what a Git host's push webhook sends) to source-controller's
//     artifact of the commit;
//   - ks/commit and objects/commit: the Kustomizations that reconciled the
//     change commit (from kustomize-controller's
//     gotk_reconcile_duration_seconds_count, and their status), and the
//     objects of their inventories;
//   - cpu-s: the CPU time of Flux's controllers over both phases (from
//     /proc/<pid>/stat); the RESULT line also lists every process of the
//     cluster (the API server, etcd, the controller manager, the
//     scheduler, kwok and Flux) by its CPU time over the first deploy.
//
// It is skipped unless FLEETWRIGHT_SCALE=1; docs/fleet.md has the command
// and what it measured. Wall-clock numbers are reported, never asserted.
package scale
