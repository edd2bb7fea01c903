# Sourced by the scripts that need the demo running: start_demo BINARY sets $demo_url and $demo_pid
# and stops the server (and removes its state) when the calling script exits.
start_demo() {
  local bin=$1
  demo_state=$(mktemp -d)
  # Port 0 everywhere: the server and its simulators each get a free port (the OAuth issuer and
  # the apps' upstream URLs name the ones they got), so this runs beside any other demo.
  CONCIERGE_LISTEN=127.0.0.1:0 CONCIERGE_VAR="$demo_state/var" RUST_LOG=warn \
    "$bin" serve --config concierge.toml >"$demo_state/server.log" 2>&1 &
  demo_pid=$!
  trap 'kill $demo_pid 2>/dev/null || true; rm -rf "$demo_state"' EXIT
  demo_url=
  for _ in $(seq 1 100); do
    demo_url=$(sed -n 's/^concierge listening on //p' "$demo_state/server.log")
    [ -n "$demo_url" ] && return 0
    kill -0 $demo_pid 2>/dev/null || break
    sleep 0.1
  done
  echo "concierge did not start:"; cat "$demo_state/server.log"
  return 1
}
