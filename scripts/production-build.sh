#!/usr/bin/env bash
# The production build (`--no-default-features`: no simulators) as docs/src/guides/operating.md
# ("Building for production") gives it: it links
# no simulator crate, refuses a config that asks for one with a clear message, and serves one
# that does not. Run last by test.sh: it leaves target/debug/concierge built without simulators.
set -euo pipefail
cd "$(dirname "$0")/.."

if cargo tree -p concierge --no-default-features -e normal --locked | grep -q 'concierge-sim'; then
    echo "production build: a simulator crate is linked" >&2
    exit 1
fi
cargo build -p concierge --no-default-features --locked
bin=target/debug/concierge
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# The demo config starts simulators: a production binary must say it has none.
if "$bin" check --config concierge.toml >"$dir/out" 2>&1; then
    echo "production build: the demo config with [simulators] passed check" >&2
    exit 1
fi
grep -q "this build has no simulators" "$dir/out" || {
    cat "$dir/out" >&2
    echo "production build: no clear message for [simulators]" >&2
    exit 1
}

# A deployment without simulators checks and serves.
cat >"$dir/concierge.toml" <<'TOML'
[server]
listen = "127.0.0.1:0"

[[endpoint]]
path = "/conformance/mcp"
handler = "conformance"
auth = { kind = "none" }
TOML
"$bin" check --config "$dir/concierge.toml"
"$bin" serve --config "$dir/concierge.toml" >"$dir/serve.out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
    grep -q "listening on" "$dir/serve.out" && break
    kill -0 "$pid" 2>/dev/null || { cat "$dir/serve.out" >&2; exit 1; }
    sleep 0.1
done
addr=$(sed -n 's/^concierge listening on \(http:[^ ]*\)$/\1/p' "$dir/serve.out")
curl -fsS "$addr/health" >/dev/null
kill "$pid"
wait "$pid" 2>/dev/null || true
echo "production build: no simulators linked; refuses [simulators]; serves without them"
