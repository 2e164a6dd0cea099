#!/usr/bin/env bash
# Starts the whole test cluster by hand: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok with a fake Node, and Flux's
# source-, kustomize-, notification- and helm-controller, all on 127.0.0.1,
# plus the stand-in postgresql chart repository. It builds (or reuses, cached
# by version) every binary first, prints the kubeconfig path and how to use
# it, and keeps everything running until Ctrl-C, then stops every process and
# removes the cluster's folder.
#
#   bash hack/cluster/up.sh            # -keep keeps logs and data, -nodes N
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

FLEETWRIGHT_TESTCLUSTER_BIN="$(bash hack/testcluster/build.sh | tail -n 1)"
FLEETWRIGHT_CLUSTER_BIN="$(bash hack/cluster/build.sh | tail -n 1)"
export FLEETWRIGHT_TESTCLUSTER_BIN FLEETWRIGHT_CLUSTER_BIN

exec go run ./hack/cluster/up "$@"
