#!/usr/bin/env bash
# Stops a server started by hack/postgres/start.sh and removes its data.
# Usage: bash hack/postgres/stop.sh DSN
set -euo pipefail
dsn=${1:?usage: stop.sh DSN}
port=${dsn##*:}
port=${port%%/*}
if ! [[ "$port" =~ ^[0-9]+$ ]]; then
	echo "postgres: cannot find the port in the DSN" >&2
	exit 1
fi
dir="${TMPDIR:-/tmp}/fleetwright-pg.$port"
[[ -d "$dir/data" ]] || { echo "postgres: no server data in $dir" >&2; exit 0; }
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ $(id -u) -eq 0 ]]; then
	runuser -u postgres -- "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >&2 || true
else
	"$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >&2 || true
fi
rm -rf "$dir"
