#!/usr/bin/env bash
# Real third-party MCP clients against the demo: the Python `mcp` SDK (in both protocol eras, a
# reload's list_changed, and MRTR confirmation of Mappy's writes), langchain-mcp-adapters
# (DeerFlow's client), the 1.x SDK's legacy SSE client on /mappy/sse, and the SDK's OAuth client. Each gets its own
# virtualenv with pinned versions under scripts/interop/. Then the walk: every tool of every
# endpoint through a success and an error path (scripts/interop/walk-plan.json) with the Python SDK
# and the TypeScript SDK (pinned in scripts/interop/ts, installed on first use; Node ≥ 18).
# Usage: scripts/interop.sh [path-to-concierge-binary]   (default: target/debug/concierge)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/concierge}
here=scripts/interop

# The two clients pin different `mcp` majors (2.x and 1.x), hence two environments.
venv() {
  local dir=$1; shift
  if [ ! -f "$dir/.installed" ]; then
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
    touch "$dir/.installed"
  fi
}
venv "$here/.venv-mcp" mcp==2.3.0
venv "$here/.venv-langchain" langchain-mcp-adapters==0.3.2
# The TypeScript SDK for the walk (pinned by ts/package-lock.json; installed again when it changes).
if ! cmp -s "$here/ts/package-lock.json" "$here/ts/node_modules/.package-lock.installed"; then
  (cd "$here/ts" && npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.package-lock.installed)
fi

. scripts/demo-server.sh
start_demo "$bin"

"$here/.venv-mcp/bin/python" "$here/python_mcp.py" "$demo_url"
# A reload heard by the Python SDK in both eras (its own server on a config it edits).
"$here/.venv-mcp/bin/python" "$here/reload.py" "$bin"
"$here/.venv-langchain/bin/python" "$here/langchain_mcp.py" "$demo_url"
# The legacy HTTP+SSE transport, with the 1.x SDK's SSE client and an OAuth sign-in.
"$here/.venv-langchain/bin/python" "$here/legacy_sse.py" "$demo_url" examples/mappy/sample.json
# The Python SDK's own OAuth client on /mappy/mcp: it must end up with the write tools.
"$here/.venv-mcp/bin/python" "$here/oauth_client.py" "$demo_url" examples/mappy/sample.json
# Mappy's confirmable write confirmed over MRTR (2026-07-28), declined, replayed, tampered, and
# without elicitation through the confirm token; then the same across three instances of the demo
# sharing their state in the test command's PostgreSQL (skipped without one).
"$here/.venv-mcp/bin/python" "$here/mrtr_confirm.py" "$demo_url"
if [ -n "${CONCIERGE_TEST_POSTGRES:-}" ]; then
  . "$here/three-instances.sh"
  start_three "$bin"
  "$here/.venv-mcp/bin/python" "$here/mrtr_confirm.py" "${instance_urls[@]}"
else
  echo "mrtr across instances: skipped (CONCIERGE_TEST_POSTGRES unset; scripts/test.sh starts a PostgreSQL)"
fi

# The walk, with both SDKs (each validates structuredContent against the tools' outputSchema); the
# Python SDK in both protocol eras (2026-07-28 by `server/discover`, 2025-11-25 by `initialize`).
status=0
"$here/.venv-mcp/bin/python" "$here/walk.py" "$demo_url" auto || status=1
"$here/.venv-mcp/bin/python" "$here/walk.py" "$demo_url" legacy || status=1
node "$here/ts/walk.mjs" "$demo_url" v1 || status=1
node "$here/ts/walk.mjs" "$demo_url" v2 || status=1
exit $status
