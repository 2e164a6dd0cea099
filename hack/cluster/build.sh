#!/usr/bin/env bash
# Builds, from the Go module proxy, every binary that test/cluster runs beyond
# kube-apiserver and etcd (those come from hack/testcluster/build.sh):
#
#   kube-controller-manager, kube-scheduler  k8s.io/kubernetes v1.37.2
#   kwok + its stage configs                 sigs.k8s.io/kwok v0.8.0
#   source-controller                        github.com/fluxcd/source-controller v1.9.1
#   kustomize-controller                     github.com/fluxcd/kustomize-controller v1.9.4
#   notification-controller                  github.com/fluxcd/notification-controller v1.9.3
#   helm-controller                          github.com/fluxcd/helm-controller v1.4.3
#
# Each lands in a folder of its own, keyed by name and version:
#
#   ${FLEETWRIGHT_CACHE:-$HOME/.cache/fleetwright}/cluster/<name>-<version>/
#
# holding the binary <name>, plus crds/ (the controller's CustomResourceDefinitions,
# copied from its module's config/crd/bases/) for the Flux controllers and
# stages.yaml (the Stage objects kwok needs, copied from the kwok module's
# kustomize/stage/) for kwok. A folder is assembled under a temporary name
# and renamed into place, so a half-built one is never taken for a cached one.
#
# When every folder is there it returns at once. The last line on stdout is
# always the parent folder (progress goes to stderr), so callers can do
#
#   FLEETWRIGHT_CLUSTER_BIN="$(bash hack/cluster/build.sh | tail -n 1)"
#   export FLEETWRIGHT_CLUSTER_BIN
#
# Cold, on two cores: about 21 minutes and up to 2.7 GB of memory, after
# hack/testcluster/build.sh (the controller manager and the scheduler reuse
# the API server's compiled packages); warm: well under a second. See
# docs/cluster.md for the measurements.
# `build.sh -list` prints the <name>-<version> folders it makes, one a line.
set -euo pipefail

readonly K8S_VERSION=v1.37.2
readonly K8S_MAJOR=1
readonly K8S_MINOR=37
readonly KWOK_VERSION=v0.8.0
readonly SOURCE_CONTROLLER_VERSION=v1.9.1
readonly KUSTOMIZE_CONTROLLER_VERSION=v1.9.4
readonly NOTIFICATION_CONTROLLER_VERSION=v1.9.3
readonly HELM_CONTROLLER_VERSION=v1.4.3

# name-version of every folder, in build order (smallest first, so a partial
# cold build still leaves the most done).
readonly parts=(
	"kwok-${KWOK_VERSION}"
	"source-controller-${SOURCE_CONTROLLER_VERSION}"
	"kustomize-controller-${KUSTOMIZE_CONTROLLER_VERSION}"
	"notification-controller-${NOTIFICATION_CONTROLLER_VERSION}"
	"helm-controller-${HELM_CONTROLLER_VERSION}"
	"kube-scheduler-${K8S_VERSION}"
	"kube-controller-manager-${K8S_VERSION}"
)

if [[ "${1:-}" == "-list" ]]; then
	printf '%s\n' "${parts[@]}"
	exit 0
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
testcluster="$(cd "${here}/../testcluster" && pwd)"
# shellcheck source=../lib/cache.sh
source "${here}/../lib/cache.sh"
out="${cache_root}/cluster"

all_present() {
	local p
	for p in "${parts[@]}"; do
		[[ -d "${out}/${p}" ]] || return 1
	done
}
cache_claim "${out}" all_present

work="$(mktemp -d "${out}/.work.XXXXXX")"
cleanup() {
	# Module copies are read-only where they came from the module cache.
	chmod -R u+w "${work}" 2>/dev/null || true
	rm -rf "${work}"
}
trap cleanup EXIT

# Never let a go.work, the caller's GOFLAGS or cgo into these builds. The
# settings are exported to this script's children only.
export GOWORK=off
export GOFLAGS=-buildvcs=false
export CGO_ENABLED=0

k8s_ldflags="-s -w"
k8s_ldflags+=" -X k8s.io/component-base/version.gitVersion=${K8S_VERSION}"
k8s_ldflags+=" -X k8s.io/component-base/version.gitMajor=${K8S_MAJOR}"
k8s_ldflags+=" -X k8s.io/component-base/version.gitMinor=${K8S_MINOR}"
k8s_ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=${K8S_VERSION}"

# module_dir MODULE@VERSION prints the module's folder in the module cache,
# downloading it first when needed.
module_dir() {
	local dir
	dir="$(go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[[ -n "${dir}" && -d "${dir}" ]] || {
		echo "build.sh: go mod download $1 gave no folder" >&2
		return 1
	}
	printf '%s\n' "${dir}"
}

# publish NAME-VERSION STAGED moves a finished folder into place.
publish() {
	rm -rf "${out:?}/$1"
	mv "$2" "${out}/$1"
	echo "build.sh: ${out}/$1 ready" >&2
}

# build_k8s NAME builds k8s.io/kubernetes/cmd/NAME from hack/testcluster,
# whose go.mod lists it as a tool.
build_k8s() {
	local name="$1" part="$1-${K8S_VERSION}" stage="${work}/$1-${K8S_VERSION}"
	[[ -d "${out}/${part}" ]] && return 0
	echo "build.sh: building ${name} ${K8S_VERSION}" >&2
	mkdir -p "${stage}"
	(cd "${testcluster}" && GOFLAGS="${GOFLAGS} -mod=readonly" \
		go build -trimpath -ldflags "${k8s_ldflags}" -o "${stage}/${name}" "k8s.io/kubernetes/cmd/${name}")
	publish "${part}" "${stage}"
}

build_kwok() {
	local part="kwok-${KWOK_VERSION}" stage="${work}/kwok-${KWOK_VERSION}" src
	[[ -d "${out}/${part}" ]] && return 0
	echo "build.sh: building kwok ${KWOK_VERSION}" >&2
	mkdir -p "${stage}/gobin"
	GOBIN="${stage}/gobin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
	mv "${stage}/gobin/kwok" "${stage}/kwok"
	rmdir "${stage}/gobin"
	# The standalone binary has no built-in stages: copy the ones the module
	# ships (node initialize and heartbeat with a Lease; pod ready, complete
	# and delete) into one multi-document file for --config.
	src="$(module_dir "sigs.k8s.io/kwok@${KWOK_VERSION}")/kustomize/stage"
	local f first=1
	for f in node/fast/node-initialize.yaml \
		node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml \
		pod/fast/pod-complete.yaml \
		pod/fast/pod-delete.yaml; do
		[[ -f "${src}/${f}" ]] || {
			echo "build.sh: kwok stage ${src}/${f} is missing" >&2
			return 1
		}
		((first)) || echo '---'
		first=0
		echo "# kwok ${KWOK_VERSION} kustomize/stage/${f}"
		cat "${src}/${f}"
	done >"${stage}/stages.yaml"
	publish "${part}" "${stage}"
}

# build_flux NAME VERSION builds a Flux controller. `go install` refuses
# their modules (their go.mod replaces the api module with ./api), so:
# copy the module to a writable folder, drop that replace, require the
# published api module of the same version, and build the copy.
build_flux() {
	local name="$1" version="$2" module="github.com/fluxcd/$1"
	local part="${name}-${version}" stage="${work}/${name}-${version}" src build
	[[ -d "${out}/${part}" ]] && return 0
	echo "build.sh: building ${name} ${version}" >&2
	src="$(module_dir "${module}@${version}")"
	build="${work}/src-${name}"
	cp -R "${src}" "${build}"
	chmod -R u+w "${build}"
	mkdir -p "${stage}/crds"
	(
		cd "${build}"
		go mod edit -dropreplace "${module}/api"
		GOFLAGS="${GOFLAGS} -mod=mod" go get "${module}/api@${version}"
		GOFLAGS="${GOFLAGS} -mod=mod" go build -trimpath -ldflags "-s -w" -o "${stage}/${name}" .
	)
	cp "${build}"/config/crd/bases/*.yaml "${stage}/crds/"
	publish "${part}" "${stage}"
}

build_kwok
build_flux source-controller "${SOURCE_CONTROLLER_VERSION}"
build_flux kustomize-controller "${KUSTOMIZE_CONTROLLER_VERSION}"
build_flux notification-controller "${NOTIFICATION_CONTROLLER_VERSION}"
build_flux helm-controller "${HELM_CONTROLLER_VERSION}"
build_k8s kube-scheduler
build_k8s kube-controller-manager

all_present || {
	echo "build.sh: some folders are missing under ${out}" >&2
	exit 1
}
printf '%s\n' "${out}"
