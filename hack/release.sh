#!/usr/bin/env bash
# Makes a release: hack/release.sh VERSION [OUT]
#
# Writes into OUT (default dist/, which must be empty or missing) one
# tar.gz per platform (darwin and linux, amd64 and arm64) holding render,
# verify and webhook, an SPDX SBOM per archive, and SHA256SUMS. The same
# commit and Go release give the same bytes on every run: the date is
# SOURCE_DATE_EPOCH (default the commit's time), nothing else varies.
#
# With FLEETWRIGHT_IMAGE=REGISTRY/REPO it also builds the container image
# from the linux archives (hack/image/Dockerfile, fleetwright's own builder)
# and pushes it as REGISTRY/REPO:VERSION, an index for linux/amd64 and
# linux/arm64; ghcr.io takes GITHUB_TOKEN.
#
# FLEETWRIGHT_RELEASE_PLATFORMS=linux/amd64,... builds fewer platforms (for
# a quick try); FLEETWRIGHT_RELEASE_DIRTY=1 allows uncommitted changes.
# See docs/release.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version="${1:?usage: hack/release.sh VERSION [OUT], e.g. hack/release.sh v1.2.3}"
out="${2:-dist}"

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

"$tool/release" build -version "$version" -commit "$commit" -out "$out" \
	-platforms "${FLEETWRIGHT_RELEASE_PLATFORMS:-}"

if [[ -n "${FLEETWRIGHT_IMAGE:-}" ]]; then
	"$tool/release" image -version "$version" -commit "$commit" -dist "$out" -repo "$FLEETWRIGHT_IMAGE"
fi
