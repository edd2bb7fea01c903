#!/usr/bin/env bash
# The built-in OAuth server's sign-in and consent page in a real browser (headless Chromium driven
# by Playwright): a public client registers as Claude Code does, the page is read, a wrong password
# is refused, Allow sends a code (exchanged with PKCE), Deny sends error=access_denied, and the page
# refuses to be framed. Installs Chromium and playwright-core on first use (scripts/browser/install.sh).
# Usage: scripts/consent-browser.sh [screenshot.png]
#   binary: $CONCIERGE_BIN (default target/debug/concierge); screenshot: none unless given.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CONCIERGE_BIN:-target/debug/concierge}
shot=${1:-}
[ -z "$shot" ] || case $shot in /*) ;; *) shot=$PWD/$shot ;; esac

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

# Two distinct free loopback ports: the server's, and the client's redirect (nothing listens there;
# the browser script answers it).
read -r port callback_port < <(node -e '
  const net = require("net");
  const a = net.createServer().listen(0, "127.0.0.1", () => {
    const b = net.createServer().listen(0, "127.0.0.1", () => {
      console.log(a.address().port, b.address().port); a.close(); b.close();
    });
  });')
issuer="http://127.0.0.1:$port"
resource="$issuer/coffee/mcp"
callback="http://127.0.0.1:$callback_port/callback"

cat >"$work/concierge.toml" <<EOF
[server]
listen = "127.0.0.1:$port"

[oauth]
issuer = "$issuer"
database = "$work/oauth.sqlite"
scopes = ["coffee:read", "coffee:order"]

[apps.coffee]
menu = "$PWD/examples/coffee/menu.xlsx"
orders = "$work/orders.xlsx"

[[endpoint]]
path = "/coffee/mcp"
tools = ["coffee.*"]
auth = { kind = "oauth", scopes = ["coffee:read"] }
tool_scopes = { get_menu = ["coffee:read"], search_menu = ["coffee:read"], get_order_status = ["coffee:read"], create_order = ["coffee:order"] }
EOF

printf 'correct horse battery\n' | "$bin" token --config "$work/concierge.toml" add-user alice >/dev/null

RUST_LOG=warn "$bin" serve --config "$work/concierge.toml" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "$issuer/health" >/dev/null 2>&1 && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "concierge did not start:"; cat "$work/server.log"; exit 1
  fi
  sleep 0.1
done
curl -fsS "$issuer/health" >/dev/null || { echo "concierge does not answer /health:"; cat "$work/server.log"; exit 1; }

client_id=$(curl -fsS -X POST "$issuer/register" -H 'content-type: application/json' \
  -d '{"redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none", "client_name": "Claude Code"}' |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).client_id))')
[ -n "$client_id" ] || { echo "registration gave no client_id"; exit 1; }

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
# Prints: state verifier authorize-url (the redirect URI and scopes percent-encoded by hand).
authorize_request() {
  local state verifier challenge
  state=$(openssl rand 16 | b64url)
  verifier=$(openssl rand 32 | b64url)
  challenge=$(printf %s "$verifier" | openssl dgst -sha256 -binary | b64url)
  echo "$state" "$verifier" "$issuer/authorize?response_type=code&client_id=$client_id&redirect_uri=http%3A%2F%2F127.0.0.1%3A$callback_port%2Fcallback&state=$state&code_challenge=$challenge&code_challenge_method=S256&scope=coffee%3Aread%20coffee%3Aorder"
}

status=0
run() {
  local decision=$1; shift
  local state verifier url
  read -r state verifier url < <(authorize_request)
  # `--name=value`: random values (state, verifier) may begin with a dash.
  node scripts/browser/consent.mjs --decision="$decision" --url="$url" --issuer="$issuer" \
    --resource="$resource" --client-id="$client_id" --state="$state" --callback="$callback" \
    --verifier="$verifier" "$@" || status=1
}
run allow ${shot:+--screenshot="$shot"} --frame-check
run deny

if [ $status -ne 0 ]; then
  echo "server log:"; cat "$work/server.log"
fi
exit $status
