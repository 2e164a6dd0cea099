#!/usr/bin/env bash
# Runs every check and test of the project, on a fresh machine too: builds (or
# reuses, cached by version) the test kube-apiserver and etcd, and the rest of
# the end-to-end cluster (controller-manager, scheduler, kwok, Flux), starts a
# throwaway PostgreSQL, installs Chromium (for the browser test of the status
# pages) when missing, then gofmt, go vet and the whole test suite with the
# race detector.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*" >&2; }

step "test cluster binaries (kube-apiserver, etcd)"
FLEETWRIGHT_TESTCLUSTER_BIN="$(bash hack/testcluster/build.sh | tail -n 1)"
export FLEETWRIGHT_TESTCLUSTER_BIN

# After the apiserver: kube-controller-manager and kube-scheduler reuse its
# compiled packages.
step "cluster binaries (kube-controller-manager, kube-scheduler, kwok, Flux controllers)"
FLEETWRIGHT_CLUSTER_BIN="$(bash hack/cluster/build.sh | tail -n 1)"
export FLEETWRIGHT_CLUSTER_BIN

step "PostgreSQL for the history store tests"
FLEETWRIGHT_TEST_POSTGRES_DSN="$(bash hack/postgres/start.sh | tail -n 1)"
export FLEETWRIGHT_TEST_POSTGRES_DSN
trap 'bash hack/postgres/stop.sh "$FLEETWRIGHT_TEST_POSTGRES_DSN" || true' EXIT

step "Debian packages for the tests (chromium: the status page browser test; busybox-static: the RUN builder tests' images; runc: the OCI runtime RUN executes in)"
missing=()
command -v chromium >/dev/null || missing+=(chromium)
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
command -v runc >/dev/null || command -v crun >/dev/null || missing+=(runc)
if ((${#missing[@]})); then
	if [[ $(id -u) -eq 0 ]]; then
		DEBIAN_FRONTEND=noninteractive apt-get update >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2
	else
		echo "missing ${missing[*]} and this is not root: install them, or the tests that need them fail or skip" >&2
	fi
fi

step "gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './hack/*'))"
if [[ -n "$unformatted" ]]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "go vet"
go vet ./...

step "go test"
go test -race -shuffle=on -count=1 -timeout 30m ./...
