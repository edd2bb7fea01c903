# Sourced by scripts/test.sh: install_nginx puts Debian's nginx-light on this machine when it is
# missing and exports CONCIERGE_TEST_NGINX, the binary the cluster test runs in front of three
# instances (on free loopback ports, its own config and temp dir; the package's service is not used).
install_nginx() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  local nginx
  nginx=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null || true)
  if [ -z "$nginx" ]; then
    local log
    log=$(mktemp)
    if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light; } >"$log" 2>&1; then
      cat "$log"; rm -f "$log"
      echo "nginx.sh: could not install nginx-light" >&2
      return 1
    fi
    rm -f "$log"
    nginx=/usr/sbin/nginx
  fi
  export CONCIERGE_TEST_NGINX="$nginx"
}
