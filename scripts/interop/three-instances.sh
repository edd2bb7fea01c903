# Sourced by scripts/interop.sh: start_three BINARY starts three instances of the demo that share
# their state in a fresh database of the test command's PostgreSQL (CONCIERGE_TEST_POSTGRES) — write
# safety's records and secret, the OAuth server's clients, keys and tokens — and one issuer URL (the
# first instance's), and sets instance_urls. They are stopped, and their files removed, when the
# calling script exits.
start_three() {
  local bin=$1
  three_state=$(mktemp -d)
  local database="mrtr_$(date +%s)_$$"
  "$CONCIERGE_TEST_PG_BIN/psql" -q "$CONCIERGE_TEST_POSTGRES" -c "CREATE DATABASE $database" >/dev/null
  local url="${CONCIERGE_TEST_POSTGRES%/*}/$database"
  local ports=() pids=()
  for _ in 1 2 3; do
    ports+=("$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')")
  done
  instance_urls=()
  for i in 0 1 2; do
    mkdir -p "$three_state/$i"
    CONCIERGE_LISTEN="127.0.0.1:${ports[$i]}" CONCIERGE_VAR="$three_state/$i/var" RUST_LOG=warn \
      CONCIERGE_DATABASE_URL="$url" CONCIERGE_INSTANCE="i$i" \
      CONCIERGE_SESSION_SECRET="a secret the three instances of this test share" \
      CONCIERGE_PUBLIC_URL="http://127.0.0.1:${ports[0]}" \
      "$bin" serve --config concierge.toml >"$three_state/$i/server.log" 2>&1 &
    pids+=($!)
    instance_urls+=("http://127.0.0.1:${ports[$i]}")
  done
  trap 'kill '"${pids[*]}"' 2>/dev/null || true; rm -rf "$three_state"; '"$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")" EXIT
  for i in 0 1 2; do
    local ready=
    for _ in $(seq 1 150); do
      if grep -q '^concierge listening on' "$three_state/$i/server.log"; then ready=1; break; fi
      kill -0 "${pids[$i]}" 2>/dev/null || break
      sleep 0.1
    done
    if [ -z "$ready" ]; then
      echo "instance $i did not start:"; cat "$three_state/$i/server.log"
      return 1
    fi
  done
}
