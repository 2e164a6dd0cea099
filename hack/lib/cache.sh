# Sourced by the build scripts: where the cache is, and one build at a time
# per cache folder.

cache_root="${FLEETWRIGHT_CACHE:-${HOME:?HOME or FLEETWRIGHT_CACHE must be set}/.cache/fleetwright}"

# cache_claim DIR DONE: when the command DONE finds the build in DIR, prints
# DIR and exits; otherwise makes DIR and returns holding its lock, after any
# other build of it has finished (and then exits the same way if that build
# left what DONE looks for). flock comes with util-linux; without it,
# concurrent builds are still safe, only wasteful.
cache_claim() {
	local dir=$1 done=$2
	if "${done}"; then
		printf '%s\n' "${dir}"
		exit 0
	fi
	command -v go >/dev/null 2>&1 || {
		echo "$(basename "$0"): go is not on PATH" >&2
		exit 1
	}
	mkdir -p "${dir}"
	if command -v flock >/dev/null 2>&1; then
		exec 9>"${dir}/.lock"
		flock 9
		if "${done}"; then
			printf '%s\n' "${dir}"
			exit 0
		fi
	fi
}
