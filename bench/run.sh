#!/usr/bin/env bash
# Side-by-side benchmark: concierge (stateless, stateful and behind OAuth) against bare rmcp,
# FastMCP and the TypeScript SDK, serving the same two coffee tools over the same menu.xlsx, on
# loopback; then the ski catalog at size over HTTP and the start-up time (bench/catalog.py).
#   bench/run.sh            full run: c1 and c32, 7 repeats, table to bench/results/<date>.md
#   bench/run.sh --smoke    CI smoke: concierge and bare rmcp only, c1, one short run
#   bench/run.sh --cluster  the price of shared state: one instance in-process, one on Redis and
#                           PostgreSQL, three behind nginx (bench/cluster.py), table to
#                           bench/results/<date>-cluster.md
#   bench/run.sh --telemetry  metrics and traces on vs off, same run (bench/telemetry.py), table to
#                           bench/results/<date>-telemetry.md
#   bench/run.sh --sql      SQL tools against MCP Toolbox on one PostgreSQL (bench/sql.py), table to
#                           bench/results/<date>-sql.md
#   bench/run.sh --reload     a reload's time and the calls' latency during reloads, on the demo
#                           and on 200 tools (bench/reload.py), table to
#                           bench/results/<date>-reload.md
#   bench/run.sh --federation  a FastMCP server direct, through concierge (kind = "mcp"), through
#                           IBM ContextForge, relayed by nginx and by json-relay (bench/federation.py), table to
#                           bench/results/<date>-federation.md
#   bench/run.sh --openapi  one GET through kind = "openapi" against the same request by hand as
#                           kind = "http" (nginx as the API), and start-up with GitHub's document
#                           (bench/openapi.py), table to bench/results/<date>-openapi.md
# Extra arguments go to bench/harness.py (e.g. --duration 5 --repeat 5).
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=false
cluster=false
telemetry=false
sql=false
federation=false
reload=false
openapi=false
for arg in "$@"; do
  [ "$arg" = "--openapi" ] && openapi=true
  [ "$arg" = "--sql" ] && sql=true
  [ "$arg" = "--federation" ] && federation=true
  [ "$arg" = "--reload" ] && reload=true
  [ "$arg" = "--telemetry" ] && telemetry=true
  [ "$arg" = "--smoke" ] && smoke=true
  [ "$arg" = "--cluster" ] && cluster=true
done

if $sql; then
  . scripts/postgres.sh && start_postgres
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null
  cargo build --quiet --release -p concierge
  # MCP Toolbox from PyPI (its Go binary in the wheel), pinned, into an ignored folder.
  if [ ! -x bench/.venv-toolbox/bin/toolbox-server ]; then
    rm -rf bench/.venv-toolbox && python3 -m venv bench/.venv-toolbox
    bench/.venv-toolbox/bin/pip install --quiet --disable-pip-version-check toolbox-server==1.15.0
  fi
  args=()
  for arg in "$@"; do [ "$arg" != "--sql" ] && args+=("$arg"); done
  # Not exec: postgres.sh stops its server when this script exits.
  python3 bench/sql.py --bin target/release "${args[@]}"
  exit
fi

if $openapi; then
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null
  command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx; } >/dev/null
  cargo build --quiet --release -p concierge
  . scripts/upstreams.sh && install_github_spec
  args=()
  for arg in "$@"; do [ "$arg" != "--openapi" ] && args+=("$arg"); done
  exec python3 bench/openapi.py --bin target/release "${args[@]}"
fi

if $reload; then
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null
  cargo build --quiet --release -p concierge
  # The demo's `files` instance runs npm's filesystem server: without it the demo is degraded.
  . scripts/upstreams.sh && install_upstreams
  args=()
  for arg in "$@"; do [ "$arg" != "--reload" ] && args+=("$arg"); done
  exec python3 bench/reload.py --bin target/release "${args[@]}"
fi

if $federation; then
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null
  # nginx relays the same calls beside the gateways: the floor under any gateway's CPU.
  command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx; } >/dev/null
  # json-relay: the same relay on concierge's stack, reading JSON both ways (bench/peers/json-relay).
  cargo build --quiet --release -p concierge -p json-relay
  # The FastMCP peer (bench/.venv, as for the main run) and ContextForge, pinned, into ignored folders.
  if [ ! -f bench/.venv/.installed ]; then
    rm -rf bench/.venv && python3 -m venv bench/.venv
    bench/.venv/bin/pip install --quiet --disable-pip-version-check \
      fastmcp==4.1.6 uvicorn==0.54.0 uvloop==0.23.0 httptools==0.9.0 openpyxl==3.1.5
    touch bench/.venv/.installed
  fi
  if [ ! -x bench/.venv-contextforge/bin/mcpgateway ]; then
    rm -rf bench/.venv-contextforge && python3 -m venv bench/.venv-contextforge
    bench/.venv-contextforge/bin/pip install --quiet --disable-pip-version-check mcp-contextforge-gateway==1.0.7.post20260921
  fi
  args=()
  for arg in "$@"; do [ "$arg" != "--federation" ] && args+=("$arg"); done
  exec python3 bench/federation.py --bin target/release "${args[@]}"
fi

if $cluster; then
  # Installs PostgreSQL when missing (and names its programs; cluster.py runs its own server).
  . scripts/postgres.sh && start_postgres
  . scripts/redis.sh && install_redis
  . scripts/nginx.sh && install_nginx
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null
  cargo build --quiet --release -p concierge
  args=()
  for arg in "$@"; do [ "$arg" != "--cluster" ] && args+=("$arg"); done
  # Not exec: postgres.sh stops its server when this script exits.
  python3 bench/cluster.py --bin target/release "${args[@]}"
  exit
fi

if $telemetry; then
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null
  cargo build --quiet --release -p concierge
  args=()
  for arg in "$@"; do [ "$arg" != "--telemetry" ] && args+=("$arg"); done
  exec python3 bench/telemetry.py --bin target/release "${args[@]}"
fi

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
  elif $smoke; then
    echo "bench smoke skipped: wrk is not installed (apt-get install wrk)"; exit 0
  else
    echo "wrk is needed: apt-get install wrk"; exit 1
  fi
fi

if $smoke; then
  cargo build --quiet -p concierge -p rmcp-bare
  bin=target/debug
else
  cargo build --quiet --release -p concierge -p rmcp-bare
  bin=target/release
  # Peers from the registries, into ignored folders, pinned.
  if [ ! -f bench/.venv/.installed ]; then
    rm -rf bench/.venv && python3 -m venv bench/.venv
    bench/.venv/bin/pip install --quiet --disable-pip-version-check \
      fastmcp==4.1.6 uvicorn==0.54.0 uvloop==0.23.0 httptools==0.9.0 openpyxl==3.1.5
    touch bench/.venv/.installed
  fi
  if [ ! -d bench/peers/typescript/node_modules ]; then
    (cd bench/peers/typescript && npm install --no-audit --no-fund --loglevel=error)
  fi
fi

exec python3 bench/harness.py --bin "$bin" "$@"
