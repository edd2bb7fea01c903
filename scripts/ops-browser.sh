#!/usr/bin/env bash
# The ops console in a real browser (headless Chromium driven by Playwright): the demo deployment
# with its ops token set, some MCP traffic, then an operator signs in, reads the overview, syncs
# the ski content, filters the audit, revokes an OAuth client; forms without the CSRF token or
# from another origin are refused (scripts/browser/ops.mjs).
# Usage: scripts/ops-browser.sh [SCREENSHOT_DIR]
#   binary: $CONCIERGE_BIN (default target/debug/concierge). With a directory, the pages are saved
#   as ops-overview.png, ops-audit.png and ops-oauth.png (the book shows those from docs/src/images/:
#   `scripts/ops-browser.sh docs/src/images` retakes them).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CONCIERGE_BIN:-target/debug/concierge}
shots=${1:-}
[ -z "$shots" ] || { case $shots in /*) ;; *) shots=$PWD/$shots ;; esac; mkdir -p "$shots"; }

scripts/browser/install.sh

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
base="http://127.0.0.1:$port"
token=$(openssl rand -hex 16)

CONCIERGE_LISTEN="127.0.0.1:$port" CONCIERGE_VAR="$work" CONCIERGE_OPS_TOKEN="$token" \
  CONCIERGE_PUBLIC_URL="$base" RUST_LOG=warn "$bin" serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "$base/health" >/dev/null 2>&1 && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "concierge did not start:"; cat "$work/server.log"; exit 1
  fi
  sleep 0.2
done

client_id=$(curl -fsS -X POST "$base/register" -H 'content-type: application/json' \
  -d '{"redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none", "client_name": "Claude Code"}' |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).client_id))')
[ -n "$client_id" ] || { echo "registration gave no client_id"; exit 1; }

status=0
node scripts/browser/ops.mjs --base="$base" --token="$token" --client-id="$client_id" \
  ${shots:+--screenshots="$shots"} || status=1
if [ $status -ne 0 ]; then
  echo "server log:"; cat "$work/server.log"
fi
exit $status
