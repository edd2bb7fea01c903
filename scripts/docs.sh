#!/usr/bin/env bash
# The book cannot rot silently: it is built with mdBook (pinned, installed from crates.io on first
# use into scripts/docs/.mdbook) with any warning an error, every internal link and anchor of the
# built pages must lead somewhere, and every TOML example marked as a config must pass
# `concierge check`: ```toml,config is a whole config, ```toml,fragment is appended to the demo's
# concierge.toml (both read from the repository's root, as a reader would run them).
# The generated reference (docs/src/reference/config.md, cli.md, concierge.schema.json) is
# compared with the code by `cargo test` (bin/concierge/src/reference_tests.rs). Taplo (npm, pinned
# by scripts/docs/package-lock.json) checks the shipped configs against the schema they name.
# Usage: scripts/docs.sh [path/to/concierge]   (default target/debug/concierge)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/concierge}
MDBOOK_VERSION=0.5.4
mdbook=scripts/docs/.mdbook/bin/mdbook
if ! "$mdbook" --version 2>/dev/null | grep -q "v$MDBOOK_VERSION"; then
  cargo install mdbook --version "=$MDBOOK_VERSION" --locked --no-default-features \
    --features search --root scripts/docs/.mdbook --quiet
fi
out=target/book
rm -rf "$out"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$mdbook" build docs --dest-dir "$PWD/$out" >"$log" 2>&1; then
  cat "$log"
  echo "docs: mdbook build failed"
  exit 1
fi
if grep -E "WARN|ERROR" "$log"; then
  echo "docs: mdbook warned (warnings are errors here)"
  exit 1
fi
# Taplo (VS Code's "Even Better TOML") reads the schema each shipped config names in its first
# line: every shipped config passes it, and a misspelt key is underlined.
if [ ! -x scripts/docs/node_modules/.bin/taplo ]; then
  (cd scripts/docs && npm ci --no-audit --no-fund --loglevel=error)
fi
taplo=scripts/docs/node_modules/.bin/taplo
for config in concierge.toml bench/concierge-*.toml; do
  RUST_LOG=warn "$taplo" check "$config" || { echo "docs: Taplo refuses $config"; exit 1; }
done
misspelt=.docs-check-taplo.toml
sed 's/^\[server\]$/[server]\nmax_body_byte = 5/' concierge.toml >"$misspelt"
if RUST_LOG=warn "$taplo" check "$misspelt" >/dev/null 2>&1; then
  rm -f "$misspelt"
  echo "docs: Taplo passed a misspelt key (max_body_byte): is the #:schema line read?"
  exit 1
fi
rm -f "$misspelt"
python3 scripts/docs/links.py "$out"
python3 scripts/docs/configs.py "$bin"
echo "docs: ok"
