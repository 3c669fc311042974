#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the test suite and the bench.
#
#   eval "$(scripts/pg-test-cluster.sh start)"     # prints export lines
#   ... TOOLGATE_TEST_PG_URL=postgres://toolgate:…@127.0.0.1:PORT/toolgate ...
#   scripts/pg-test-cluster.sh stop "$TOOLGATE_TEST_PG_DIR"
#
# `start [--durable]` makes a temporary folder, runs initdb and pg_ctl as a
# non-root user (the `postgres` system user when run as root, since PostgreSQL
# refuses to run as root), listens on 127.0.0.1 at a free port with password
# (scram-sha-256) authentication, and creates the role `toolgate` (CREATEDB,
# so the test helper can give every test its own database) and the database
# `toolgate`. It prints two export lines and nothing else on stdout.
# Without --durable the cluster runs with fsync=off: it only ever holds test
# data, and the daemons under test (not the server) are what the tests kill.
#
# `restart DIR` restarts that cluster with a fast shutdown (`pg_ctl restart
# -m fast`: every session is ended), on the same port — for the tests of a
# daemon that survives its database. `stop DIR` stops that cluster (fast
# shutdown) and removes DIR.
set -euo pipefail

find_bindir() {
  if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; return; fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ]; then echo "$d"; return; fi
  done
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  echo "pg-test-cluster: initdb not found (install PostgreSQL, e.g. apt-get install postgresql, or set PG_BINDIR)" >&2
  exit 1
}

# Runs a PostgreSQL binary as the cluster's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

start() {
  local durable=0
  [ "${1:-}" = "--durable" ] && durable=1
  local bindir dir port password
  bindir=$(find_bindir)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-pg.XXXXXX")
  chmod 0700 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  password=$(node -e "console.log(require('crypto').randomBytes(18).toString('base64url'))")
  # The superuser authenticates over the private socket only; TCP needs a password.
  as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
  local extra=""
  [ "$durable" = 0 ] && extra="-c fsync=off -c full_page_writes=off"
  local tries=0
  while :; do
    port=$(free_port)
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 $extra" start >/dev/null; then
      break
    fi
    tries=$((tries + 1))
    if [ "$tries" -ge 3 ]; then cat "$dir/server.log" >&2; exit 1; fi
  done
  # The password goes through psql's variable quoting (:'pw'), never through SQL text.
  as_owner "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres -v pw="$password" >/dev/null <<'SQL'
CREATE ROLE toolgate LOGIN CREATEDB PASSWORD :'pw';
CREATE DATABASE toolgate OWNER toolgate;
SQL
  echo "export TOOLGATE_TEST_PG_URL='postgres://toolgate:$password@127.0.0.1:$port/toolgate'"
  echo "export TOOLGATE_TEST_PG_DIR='$dir'"
}

stop() {
  local dir="${1:-${TOOLGATE_TEST_PG_DIR:-}}"
  if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then echo "pg-test-cluster: no cluster folder given" >&2; exit 1; fi
  local bindir
  bindir=$(find_bindir)
  as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

restart() {
  local dir="${1:-${TOOLGATE_TEST_PG_DIR:-}}"
  if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then echo "pg-test-cluster: no cluster folder given" >&2; exit 1; fi
  local bindir
  bindir=$(find_bindir)
  # pg_ctl restart starts the server again with the options it was started with (postmaster.opts).
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null
}

case "${1:-}" in
  start) shift; start "$@" ;;
  restart) shift; restart "$@" ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: $0 start [--durable] | restart DIR | stop DIR" >&2; exit 2 ;;
esac
