#!/usr/bin/env bash
# Real third-party MCP clients against the demo: the Python `mcp` SDK, langchain-mcp-adapters
# (DeerFlow's client), and the 1.x SDK's legacy SSE client on /mappy/sse. Each gets its own
# virtualenv with pinned versions under scripts/interop/.
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

. scripts/demo-server.sh
start_demo "$bin"

"$here/.venv-mcp/bin/python" "$here/python_mcp.py" "$demo_url"
"$here/.venv-langchain/bin/python" "$here/langchain_mcp.py" "$demo_url"
# The legacy HTTP+SSE transport, with the 1.x SDK's SSE client and an OAuth sign-in.
"$here/.venv-langchain/bin/python" "$here/legacy_sse.py" "$demo_url" examples/mappy/sample.json
