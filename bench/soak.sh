#!/usr/bin/env bash
# The soak (bench/soak.py): a release build, a Python venv with the official MCP SDK and
# matplotlib, then the run. Not part of the test command: it takes the minutes it is given.
#   bench/soak.sh --minutes 30
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release -p concierge
if [ ! -x bench/.venv-soak/bin/python ]; then
  python3 -m venv bench/.venv-soak
  bench/.venv-soak/bin/pip install --quiet "mcp==2.3.0" "matplotlib==3.10.7" "openpyxl==3.1.5"
fi
exec bench/.venv-soak/bin/python bench/soak.py --bin target/release "$@"
