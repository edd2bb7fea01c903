#!/usr/bin/env bash
# The official conformance suite's client scenarios run this with the scenario's server URL last
# (and MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT in the environment): it drives
# concierge's MCP client — the one `kind = "mcp"` reaches a server with — through
# `concierge mcp-probe`, as an instance would: connect, list the tools, call the scenario's tool.
# Usage (by scripts/conformance.sh): conformance-client.sh BINARY URL
set -euo pipefail
bin=$1
url=${*: -1}
# The 2025-11-25 scenarios' servers answer any method they do not know with an empty result, a
# `server/discover` too: those run as an instance with `protocol = "2025-11-25"` does.
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  initialize) exec "$bin" mcp-probe --protocol 2025-11-25 "$url" ;;
  tools_call) exec "$bin" mcp-probe --call add_numbers --arguments '{"a":2,"b":3}' "$url" ;;
  sse-retry) exec "$bin" mcp-probe --protocol 2025-11-25 --call test_reconnection "$url" ;;
  # The calls the scenario names in its context.
  http-custom-headers)
    calls=$(printf '%s' "$MCP_CONFORMANCE_CONTEXT" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["toolCalls"]))')
    exec "$bin" mcp-probe --calls "$calls" "$url" ;;
  auth/client-credentials-*)
    client_id=$(printf '%s' "$MCP_CONFORMANCE_CONTEXT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_id"])')
    CONFORMANCE_CLIENT_SECRET=$(printf '%s' "$MCP_CONFORMANCE_CONTEXT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_secret"])')
    export CONFORMANCE_CLIENT_SECRET
    exec "$bin" mcp-probe --client-id "$client_id" --client-secret-env CONFORMANCE_CLIENT_SECRET "$url" ;;
  *) exec "$bin" mcp-probe "$url" ;;
esac
