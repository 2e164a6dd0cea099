#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on a free loopback port and prints its
# DSN on stdout (all other output goes to stderr). Installs Debian's postgresql
# package when no server binaries are found. Stop it with:
#   bash hack/postgres/stop.sh "$DSN"
set -euo pipefail

log() { echo "postgres: $*" >&2; }

find_bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
		echo "$d"
	fi
}

bindir=$(find_bindir)
if [[ -z "$bindir" ]]; then
	if [[ $(id -u) -ne 0 ]]; then
		log "PostgreSQL server binaries not found; install Debian's postgresql package (as root)"
		exit 1
	fi
	log "installing Debian's postgresql package"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2
	apt-get install -y --no-install-recommends postgresql >&2
	bindir=$(find_bindir)
	if [[ -z "$bindir" ]]; then
		log "initdb still not found after installing postgresql"
		exit 1
	fi
fi

# PostgreSQL refuses to run as root: use the package's postgres user then.
as_db() { "$@"; }
owner=""
if [[ $(id -u) -eq 0 ]]; then
	if ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /usr/sbin/nologin postgres
	fi
	owner=postgres
	as_db() { runuser -u postgres -- "$@"; }
fi

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port sets port to a loopback port nothing listens on now.
pick_port() {
	port=""
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 30000))
		if port_free "$p" && [[ ! -e "${TMPDIR:-/tmp}/fleetwright-pg.$p" ]]; then
			port=$p
			return
		fi
	done
	log "no free loopback port found"
	exit 1
}

# A port free when picked may be taken before the server binds it (other
# tests listen on random ports too): then start again on another one.
for attempt in 1 2 3 4 5; do
	pick_port
	dir="${TMPDIR:-/tmp}/fleetwright-pg.$port"
	mkdir -p "$dir"
	chmod 0700 "$dir"
	if [[ -n "$owner" ]]; then
		chown "$owner" "$dir"
	fi
	as_db "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	if as_db "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >&2; then
		break
	fi
	if ! grep -q "Address already in use" "$dir/server.log" 2>/dev/null || [[ $attempt -eq 5 ]]; then
		cat "$dir/server.log" >&2 || true
		exit 1
	fi
	log "port $port was taken before the server bound it; trying another"
	as_db "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$dir"
done
log "started on 127.0.0.1:$port (data in $dir)"
echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
