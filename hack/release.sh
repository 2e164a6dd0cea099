#!/usr/bin/env bash
# Makes a release:
#
#   hack/release.sh VERSION [OUT]               the assets, into OUT (default dist/)
#   hack/release.sh image VERSION REPO [DIST]   the image, from DIST's linux archives
#
# The first writes into OUT (which must be empty or missing) one tar.gz per
# platform (darwin and linux, amd64 and arm64) holding render, verify and
# webhook, an SPDX SBOM per archive, and SHA256SUMS. The same commit and Go
# release give the same bytes on every run: the date is SOURCE_DATE_EPOCH
# (default the commit's time), nothing else varies.
#
# The second checks DIST's linux archives against its SHA256SUMS, builds the
# container image from them with fleetwright's own builder
# (hack/image/Dockerfile) and pushes REPO:VERSION, an index of linux/amd64
# and linux/arm64; it prints the pushed reference, REPO:VERSION@sha256:....
# ghcr.io takes GITHUB_TOKEN (and GITHUB_ACTOR), other registries the Docker
# configuration's credentials.
#
# FLEETWRIGHT_RELEASE_PLATFORMS=linux/amd64,... builds fewer platforms (for
# a quick try); FLEETWRIGHT_RELEASE_DIRTY=1 allows uncommitted changes.
# See docs/release.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage="usage: hack/release.sh VERSION [OUT] | hack/release.sh image VERSION REPO [DIST]"
image=""
if [[ "${1:-}" == image ]]; then
	image="${3:?$usage}"
	shift
fi
version="${1:?$usage}"
out="${2:-dist}"
[[ -n "$image" ]] && out="${3:-dist}"

if [[ -n "$(git status --porcelain --untracked-files=no)" && -z "${FLEETWRIGHT_RELEASE_DIRTY:-}" ]]; then
	echo "release: the work tree has uncommitted changes; a release is built from a commit" >&2
	exit 2
fi
commit="$(git rev-parse HEAD)"
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}"
export SOURCE_DATE_EPOCH
export GOTOOLCHAIN=local

tool="$(mktemp -d)"
trap 'rm -rf "$tool"' EXIT
go build -o "$tool/release" ./hack/release

if [[ -n "$image" ]]; then
	"$tool/release" image -version "$version" -commit "$commit" -dist "$out" -repo "$image"
	exit
fi
"$tool/release" build -version "$version" -commit "$commit" -out "$out" \
	-platforms "${FLEETWRIGHT_RELEASE_PLATFORMS:-}"
