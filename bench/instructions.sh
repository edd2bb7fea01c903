#!/usr/bin/env bash
# Instructions per tools/call under callgrind (valgrind): concierge with static tokens and with
# OAuth beside bare rmcp, same tool, one connection. Unlike req/s and CPU µs, the counts do not
# move with whatever else the machine runs, so a change's effect shows on a busy machine too.
# By hand: bench/instructions.sh  (a release build; valgrind and wrk from Debian if missing)
#          bench/instructions.sh --federation  concierge federating a FastMCP server (kind = "mcp";
#                                the server from bench/.venv, which bench/run.sh --federation makes),
#                                beside json-relay relaying the same calls reading only the JSON
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ " $* " == *" --federation "* ]] && [ ! -x bench/.venv/bin/uvicorn ]; then
  echo "instructions: --federation needs bench/.venv (bench/run.sh --federation installs it)" >&2
  exit 1
fi
for tool in valgrind wrk; do
  command -v "$tool" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$tool"; } >/dev/null
done
cargo build --quiet --release -p concierge -p rmcp-bare -p json-relay
exec python3 bench/instructions.py "$@"
