# Sourced by scripts/test.sh: install_redis puts Debian's redis-server on this machine when it is
# missing and exports CONCIERGE_TEST_REDIS_SERVER, the binary the shared-state tests start on
# free loopback ports of their own (they stop and restart it, so each test owns its server).
install_redis() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  if ! command -v redis-server >/dev/null 2>&1; then
    local log
    log=$(mktemp)
    if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; } >"$log" 2>&1; then
      cat "$log"; rm -f "$log"
      echo "redis.sh: could not install redis-server" >&2
      return 1
    fi
    rm -f "$log"
  fi
  export CONCIERGE_TEST_REDIS_SERVER
  CONCIERGE_TEST_REDIS_SERVER=$(command -v redis-server)
}
