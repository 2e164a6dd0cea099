#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that internal/testenv runs, from
# the Go module proxy, into a cache folder keyed by version:
#
#   ${FLEETWRIGHT_CACHE:-$HOME/.cache/fleetwright}/testcluster/v1.37.2/{kube-apiserver,etcd}
#
# When both binaries are already there it returns at once. The last line on
# stdout is always that folder (progress goes to stderr), so callers can do
#
#   FLEETWRIGHT_TESTCLUSTER_BIN="$(bash hack/testcluster/build.sh)"
#   export FLEETWRIGHT_TESTCLUSTER_BIN
#
# A cold build takes about four minutes on two idle cores and up to 2.4 GB of
# memory. Each binary is built under a temporary name in the cache folder and
# renamed into place, so a half-written binary is never cached.
set -euo pipefail

readonly K8S_VERSION=v1.37.2
readonly K8S_MAJOR=1
readonly K8S_MINOR=37

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cache.sh
source "${here}/../lib/cache.sh"
out="${cache_root}/testcluster/${K8S_VERSION}"

built() { [[ -x "${out}/kube-apiserver" && -x "${out}/etcd" ]]; }
cache_claim "${out}" built

tmp_api="${out}/.kube-apiserver.tmp.$$"
tmp_etcd="${out}/.etcd.tmp.$$"
cleanup() { rm -f "${tmp_api}" "${tmp_etcd}"; }
trap cleanup EXIT

# This folder is a module of its own; never let a go.work or the caller's
# GOFLAGS pull it into another build. go.sum must already be complete.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

ldflags="-s -w"
ldflags+=" -X k8s.io/component-base/version.gitVersion=${K8S_VERSION}"
ldflags+=" -X k8s.io/component-base/version.gitMajor=${K8S_MAJOR}"
ldflags+=" -X k8s.io/component-base/version.gitMinor=${K8S_MINOR}"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=${K8S_VERSION}"

cd "${here}"

if [[ ! -x "${out}/kube-apiserver" ]]; then
	echo "build.sh: building kube-apiserver ${K8S_VERSION} into ${out} (cold: ~4 min)" >&2
	go build -trimpath -ldflags "${ldflags}" -o "${tmp_api}" k8s.io/kubernetes/cmd/kube-apiserver
	mv -f "${tmp_api}" "${out}/kube-apiserver"
fi

if [[ ! -x "${out}/etcd" ]]; then
	echo "build.sh: building etcd into ${out}" >&2
	go build -trimpath -ldflags "-s -w" -o "${tmp_etcd}" ./etcd
	mv -f "${tmp_etcd}" "${out}/etcd"
fi

printf '%s\n' "${out}"
