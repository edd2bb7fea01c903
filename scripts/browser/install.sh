#!/usr/bin/env bash
# Installs what scripts/consent-browser.sh needs, on a fresh Debian machine: Debian's Chromium
# (/usr/bin/chromium) and playwright-core pinned in package-lock.json (it drives that Chromium; it
# downloads no browser of its own). Idempotent and quiet: prints nothing when all is in place.
set -euo pipefail
cd "$(dirname "$0")"

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

if [ ! -x /usr/bin/chromium ]; then
  log=$(mktemp)
  if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$log" 2>&1; then
    cat "$log"; rm -f "$log"
    echo "install.sh: could not install chromium" >&2
    exit 1
  fi
  rm -f "$log"
fi

want=$(node -p 'require("./package-lock.json").packages["node_modules/playwright-core"].version')
have=$(node -p 'try { require("./node_modules/playwright-core/package.json").version } catch { "" }')
if [ "$want" != "$have" ]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
