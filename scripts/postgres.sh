# Sourced by scripts/test.sh: start_postgres installs Debian's PostgreSQL when it is missing, starts
# a throwaway server on a free loopback port (its data in a temp dir, removed at exit), and exports
# CONCIERGE_TEST_POSTGRES (a postgres:// URL) for the tests that put shared state there, and
# CONCIERGE_TEST_PG_BIN (the server's programs) for the tests that start, stop and restart a
# PostgreSQL of their own.
start_postgres() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$bin" ]; then
    local log
    log=$(mktemp)
    if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >"$log" 2>&1; then
      cat "$log"; rm -f "$log"
      echo "postgres.sh: could not install postgresql" >&2
      return 1
    fi
    rm -f "$log"
    bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  # PostgreSQL refuses to run as root: as root, the server runs as the package's `postgres` user.
  local as=()
  [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  pg_dir=$(mktemp -d)
  chmod 755 "$pg_dir"
  [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as[@]}" "$bin/initdb" -D "$pg_dir/data" -A trust -U postgres >/dev/null
  "${as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w \
    -o "-p $port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
  export CONCIERGE_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres"
  export CONCIERGE_TEST_PG_BIN="$bin"
  pg_stop="${as[*]} $bin/pg_ctl -D $pg_dir/data -m fast stop"
  trap 'eval "$pg_stop" >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
}
