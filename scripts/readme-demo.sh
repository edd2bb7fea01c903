#!/usr/bin/env bash
# The README's first command, exactly as printed, run the way a newcomer runs it: it builds and
# serves the demo; we wait for /health, make one tool call with a real MCP client (the Python SDK)
# and one with the README's MCP Inspector line, then stop it. CI fails whenever that command, or
# the Inspector line, breaks.
#
# Only the environment differs from a newcomer's shell: a free port and a temporary state
# directory (CONCIERGE_LISTEN, CONCIERGE_VAR), so this runs beside a demo on the default port, and
# none of the variables that point the demo elsewhere. Needs scripts/interop/.venv-mcp
# (scripts/interop.sh creates it).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "readme-demo: $1"
  [ -n "${state:-}" ] && [ -f "$state/stderr.log" ] && tail -n 30 "$state/stderr.log"
  exit 1
}

# The first line of the README's first ```sh block, without its comment.
first=$(awk '/^```sh$/ { inside = 1; next } inside { print; exit }' README.md | sed 's/[[:space:]]*#.*$//')
case "$first" in
  *" serve"*) ;;
  *) fail "the README's first command does not run \`serve\`: '$first'" ;;
esac
# The Inspector CLI line: its first line and its continuation lines, joined.
inspector=$(awk '/^npx .*@modelcontextprotocol\/inspector.* --cli / { inside = 1 }
  inside && /^```/ { exit }
  inside { sub(/[[:space:]]*\\$/, ""); sub(/^[[:space:]]+/, ""); printf "%s ", $0 }' README.md)
[ -n "$inspector" ] || fail "no MCP Inspector CLI line (npx … @modelcontextprotocol/inspector … --cli) in the README"

state=$(mktemp -d)
log="$state/stdout.log"
: >"$log"
echo "readme-demo: $first"
# Its own process group (setsid), so stopping it stops cargo and the server cargo started.
env -u APP_MCP_TOKENS -u BXH_MCP_TOKEN -u BXH_KG_API_BASE -u APP_CMS_API_BASE_URL \
  -u MAPPY_API_BASE_URL -u CONCIERGE_PUBLIC_URL -u BXH_SIMULATOR_LISTEN \
  -u APP_CMS_SIMULATOR_LISTEN -u MAPPY_SIMULATOR_LISTEN \
  CONCIERGE_LISTEN=127.0.0.1:0 CONCIERGE_VAR="$state/var" RUST_LOG=warn \
  setsid bash -c "$first" >"$log" 2>"$state/stderr.log" &
pid=$!
stop() {
  local group
  group=$(ps -o pgid= "$pid" 2>/dev/null | tr -d ' ') || true
  kill -TERM -- "-${group:-$pid}" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$state"
}
trap stop EXIT

# The build may take many minutes on a fresh machine: wait while the command is alive, saying
# what it does once a minute, for at most an hour.
url=
started=$SECONDS
while :; do
  url=$(sed -n 's/^concierge listening on //p' "$log")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || fail "the command ended before the server listened"
  [ $((SECONDS - started)) -lt 3600 ] || fail "no server after an hour"
  if [ $(((SECONDS - started) % 60)) -eq 59 ]; then
    echo "readme-demo: still building: $(tail -n 1 "$state/stderr.log" 2>/dev/null)"
  fi
  sleep 1
done
echo "readme-demo: listening on $url after $((SECONDS - started)) s"

# Ready once /health says so (503 `starting` while the trip catalog loads from the first sync).
status=
for _ in $(seq 1 120); do
  status=$(curl -sS -o "$state/health.json" -w '%{http_code}' "$url/health" 2>/dev/null) || status=
  [ "$status" = 200 ] && break
  kill -0 "$pid" 2>/dev/null || fail "the server ended before /health answered"
  sleep 0.5
done
[ "$status" = 200 ] || fail "/health did not answer 200 within 60 s (last $status: $(cat "$state/health.json" 2>/dev/null))"
echo "readme-demo: /health $(cat "$state/health.json")"

scripts/interop/.venv-mcp/bin/python - "$url" <<'EOF'
import asyncio, sys
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

# The README's Inspector line, pointed at this demo (never at a demo on the default port).
line=${inspector//http:\/\/127.0.0.1:8080/$url}
[[ $line == *"$url"* ]] || fail "the Inspector line does not name http://127.0.0.1:8080: $inspector"
echo "readme-demo: $line"
out=$(bash -c "$line" 2>"$state/inspector.err") || {
  cat "$state/inspector.err"
  fail "the README's Inspector line failed"
}
grep -q 'Кокосовый латте' <<<"$out" || fail "the Inspector line did not show the drink: $out"
echo "readme-demo: 2 passed, 0 failed"
