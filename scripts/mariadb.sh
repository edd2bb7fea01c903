# Sourced by scripts/test.sh: start_mariadb installs Debian's MariaDB server when it is missing,
# starts a throwaway server on a free loopback port (its data in a temp dir, removed at exit,
# beside whatever else the shell's exit already stops), and exports CONCIERGE_TEST_MARIADB (a
# mysql:// URL of a user that may create databases) for the SQL tools' tests.
start_mariadb() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
    local log
    log=$(mktemp)
    if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mariadb-server; } >"$log" 2>&1; then
      cat "$log"; rm -f "$log"
      echo "mariadb.sh: could not install mariadb-server" >&2
      return 1
    fi
    rm -f "$log"
  fi
  # The package's service may have started with the install: it is not ours, leave it be.
  local as=()
  [ "$(id -u)" = 0 ] && as=(runuser -u mysql --)
  maria_dir=$(mktemp -d)
  chmod 755 "$maria_dir"
  [ "$(id -u)" = 0 ] && chown mysql "$maria_dir"
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as[@]}" mariadb-install-db --no-defaults --datadir="$maria_dir/data" --auth-root-authentication-method=normal \
    --skip-test-db >"$maria_dir/install.log" 2>&1 || { cat "$maria_dir/install.log"; return 1; }
  "${as[@]}" /usr/sbin/mariadbd --no-defaults --datadir="$maria_dir/data" --port="$port" \
    --bind-address=127.0.0.1 --socket="$maria_dir/socket" --pid-file="$maria_dir/pid" \
    --log-error="$maria_dir/log" --skip-name-resolve --innodb-flush-log-at-trx-commit=0 &
  local waited=0
  until mariadb --no-defaults --protocol=socket --socket="$maria_dir/socket" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    waited=$((waited + 1))
    if [ "$waited" -gt 300 ]; then cat "$maria_dir/log"; echo "mariadb.sh: the server did not start" >&2; return 1; fi
    sleep 0.1
  done
  mariadb --no-defaults --protocol=socket --socket="$maria_dir/socket" -uroot -e \
    "CREATE USER 'concierge'@'127.0.0.1' IDENTIFIED BY 'concierge'; GRANT ALL ON *.* TO 'concierge'@'127.0.0.1' WITH GRANT OPTION;"
  export CONCIERGE_TEST_MARIADB="mysql://concierge:concierge@127.0.0.1:$port"
  local previous
  previous=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
  trap -- "${previous:+$previous; }kill \$(cat \"\$maria_dir/pid\" 2>/dev/null) 2>/dev/null; rm -rf \"\$maria_dir\"" EXIT
}
