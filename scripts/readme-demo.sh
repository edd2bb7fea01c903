#!/usr/bin/env bash
# The README's first command, exactly as printed, run the way a newcomer runs it: it builds and
# serves the demo; we wait for /health, make one tool call with a real MCP client (the Python SDK)
# and one with the README's MCP Inspector line, then stop it. CI fails whenever that command, or
# the Inspector line, breaks.
#
# Only the environment differs from a newcomer's shell: a free port and a temporary state
# directory (CONCIERGE_LISTEN, CONCIERGE_VAR), so this runs beside a demo on the default port.
# Needs scripts/interop/.venv-mcp (scripts/interop.sh creates it).
set -euo pipefail
cd "$(dirname "$0")/.."

# The first line of the README's first ```sh block, without its comment.
first=$(awk '/^```sh$/ { inside = 1; next } inside { print; exit }' README.md | sed 's/[[:space:]]*#.*$//')
inspector=$(grep -m1 -E '^npx .*@modelcontextprotocol/inspector' README.md | sed 's/[[:space:]]*\\$//')
inspector_rest=$(awk '/^npx .*@modelcontextprotocol\/inspector/ { inside = 1; next } inside && /^```/ { exit } inside { print }' README.md |
  sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*\\$//' | tr '\n' ' ')
case "$first" in
  *" serve"*) ;;
  *) echo "readme-demo: the README's first command does not run \`serve\`: $first"; exit 1 ;;
esac

state=$(mktemp -d)
log="$state/stdout.log"
echo "readme-demo: $first"
# Its own process group, so stopping it stops cargo and the server it started.
CONCIERGE_LISTEN=127.0.0.1:0 CONCIERGE_VAR="$state/var" RUST_LOG=warn \
  setsid bash -c "$first" >"$log" 2>"$state/stderr.log" &
pid=$!
stop() {
  kill -TERM -- -"$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$state"
}
trap stop EXIT
fail() {
  echo "readme-demo: $1"
  tail -n 30 "$state/stderr.log"
  exit 1
}

# The build may take minutes on a fresh machine: wait as long as the command is alive.
url=
while [ -z "$url" ]; do
  url=$(sed -n 's/^concierge listening on //p' "$log")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || fail "the command ended before the server listened"
  sleep 1
done

# Ready once /health says so (503 `starting` while the trip catalog loads from the first sync).
ready=
for _ in $(seq 1 120); do
  if curl -fsS "$url/health" >"$state/health.json" 2>/dev/null; then
    ready=yes
    break
  fi
  kill -0 "$pid" 2>/dev/null || fail "the server ended before /health answered"
  sleep 0.5
done
[ -n "$ready" ] || fail "/health did not answer 200 within 60 s: $(cat "$state/health.json" 2>/dev/null)"
echo "readme-demo: /health $(cat "$state/health.json")"

scripts/interop/.venv-mcp/bin/python - "$url" <<'EOF'
import asyncio, json, sys
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

async def main(base):
    http = httpx2.AsyncClient(headers={"Authorization": "Bearer demo-token"})
    async with Client(streamable_http_client(f"{base}/coffee/mcp", http_client=http)) as client:
        result = await client.call_tool("search_menu", {"query": "кокос"})
        assert not result.is_error, result
        drinks = [r["drink"] for r in result.structured_content["results"]]
        assert "Кокосовый латте" in drinks, drinks
        print(f"readme-demo: search_menu кокос → {drinks}")

asyncio.run(main(sys.argv[1]))
EOF

# The README's Inspector line, pointed at this demo's port.
line="${inspector//http:\/\/127.0.0.1:8080/$url} $inspector_rest"
echo "readme-demo: $line"
out=$(bash -c "$line" 2>"$state/inspector.err") || {
  cat "$state/inspector.err"
  fail "the README's Inspector line failed"
}
echo "$out" | grep -q 'Кокосовый латте' || fail "the Inspector line did not show the drink: $out"
echo "readme-demo: 2 passed, 0 failed"
