#!/usr/bin/env bash
# The install step of action.yml: puts render and verify on the runner.
#
# The release to install is the version input, else the action's own ref
# when that is a release tag (uses: fleetwright/fleetwright@v1.2.3). It is
# taken from the runner's tool cache ($RUNNER_TOOL_CACHE/fleetwright/
# VERSION/ARCH) when an earlier job left it there, else downloaded from
# RELEASE_URL/VERSION/ together with SHA256SUMS, checked against it (a
# mismatch stops the job) and cached. When neither names a release (a
# branch, a commit, a major-version tag like v1), the output source=true
# tells the next steps to build the programs from the action's source.
#
# Outputs: source (true or false), bin (the folder holding render and
# verify), version (the release, when one is installed).
set -euo pipefail

# command_data escapes a value for a workflow command (see hack/action.sh).
command_data() {
	local s=${1//'%'/%25}
	s=${s//$'\r'/%0D}
	s=${s//$'\n'/%0A}
	printf '%s' "$s"
}
fail() {
	echo "::error title=fleetwright install::$(command_data "$1")"
	exit "${2:-1}"
}
output() { printf '%s=%s\n' "$1" "$2" >>"${GITHUB_OUTPUT:?}"; }
is_release() { [[ "$1" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; }

from_source() {
	echo "::notice title=fleetwright::$(command_data "$1"); building render and verify from the action's source"
	output source true
	output bin "${RUNNER_TEMP:?}/fleetwright-bin"
	exit 0
}

ref="${ACTION_REF:-}"
repository="${ACTION_REPOSITORY:-}"
# github.action_ref is not promised inside composite actions; the runner
# checks an action out at .../_actions/OWNER/NAME/REF.
if [[ -z "$ref" && "${GITHUB_ACTION_PATH:-}" == */_actions/*/*/* ]]; then
	rest="${GITHUB_ACTION_PATH#*/_actions/}"
	IFS=/ read -r owner name ref _ <<<"$rest"
	repository="${repository:-$owner/$name}"
fi

version="${INPUT_VERSION:-}"
if [[ -n "$version" ]]; then
	is_release "$version" || fail "the version input '$version' is not a release: give vMAJOR.MINOR.PATCH, e.g. v1.2.3" 2
elif is_release "$ref"; then
	version="$ref"
else
	from_source "the action's ref '${ref:-unknown}' is not a release and no version input is set"
fi

case "${RUNNER_OS:-$(uname -s)}" in
Linux) os=linux ;;
macOS | Darwin) os=darwin ;;
*)
	[[ -n "${INPUT_VERSION:-}" ]] && fail "fleetwright releases are built for Linux and macOS runners, not ${RUNNER_OS:-$(uname -s)}" 2
	from_source "fleetwright releases are built for Linux and macOS runners, not ${RUNNER_OS:-$(uname -s)}"
	;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
X64 | x86_64 | amd64) arch=amd64 cache_arch=x64 ;;
ARM64 | aarch64 | arm64) arch=arm64 cache_arch=arm64 ;;
*) fail "fleetwright releases are built for x64 and arm64 runners, not ${RUNNER_ARCH:-$(uname -m)}" 2 ;;
esac

# The tool cache's layout: TOOL/VERSION/ARCH and a VERSION/ARCH.complete
# marker, written last.
cache="${RUNNER_TOOL_CACHE:?}/fleetwright/${version#v}/$cache_arch"
if [[ -f "$cache.complete" && -x "$cache/render" && -x "$cache/verify" ]]; then
	echo "fleetwright $version from the tool cache ($cache)"
else
	base="${INPUT_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/${repository:-fleetwright/fleetwright}/releases/download}"
	base="${base%/}"
	[[ "$base" == https://* ]] || fail "the release URL '$base' is not https://: checksums fetched in the clear prove nothing" 2
	archive="fleetwright_${version#v}_${os}_${arch}.tar.gz"
	tmp="$(mktemp -d "${RUNNER_TEMP:?}/fleetwright-install.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	fetch() {
		curl --fail --silent --show-error --location --proto '=https' --proto-redir '=https' \
			--retry 3 --retry-delay 1 --connect-timeout 20 --max-time 300 -o "$tmp/$1" "$base/$version/$1" ||
			fail "downloading $base/$version/$1 failed (is $version released?)"
	}
	echo "fleetwright $version: downloading $archive from $base/$version/"
	fetch SHA256SUMS
	fetch "$archive"
	want="$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/SHA256SUMS")"
	[[ -n "$want" ]] || fail "SHA256SUMS of $version lists no $archive"
	if command -v sha256sum >/dev/null; then
		got="$(sha256sum "$tmp/$archive")"
	else
		got="$(shasum -a 256 "$tmp/$archive")"
	fi
	got="${got%% *}"
	if [[ "$got" != "$want" ]]; then
		fail "checksum mismatch: $archive from $base/$version/ has SHA-256 $got, but SHA256SUMS says $want; nothing was installed"
	fi
	mkdir "$tmp/x"
	tar -xzf "$tmp/$archive" -C "$tmp/x" render verify || fail "$archive holds no render and verify"
	mkdir -p "$(dirname "$cache")"
	rm -rf "$cache" "$cache.complete"
	mv "$tmp/x" "$cache"
	touch "$cache.complete"
	echo "fleetwright $version: SHA-256 $got matches SHA256SUMS; cached in $cache"
fi

"$cache/render" version
# An action pinned by commit installs the version input's binaries: say so
# when they come from another commit than the action's scripts.
if [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
	built="$("$cache/render" version | sed -n 's/^commit: //p')"
	if [[ "$built" != "$ref" ]]; then
		echo "::warning title=fleetwright::$(command_data "the action is pinned to commit $ref but release $version was built from ${built:-an unknown commit}; pin the commit of the $version tag")"
	fi
fi
output source false
output bin "$cache"
output version "$version"
echo "$cache" >>"${GITHUB_PATH:-/dev/null}"
