#!/usr/bin/env bash
# search_content beside the seed's own engine (MariaDB FULLTEXT) on one generated corpus: the
# 200 chatbot queries with 1 and 8 clients, p50/p95/p99 and QPS as ratios, each query's top eight
# compared, and both engines' top eights graded against bench/search_judgments (nDCG@8, P@3, MRR
# per category; bench/search.py says exactly how each side is queried). By hand, not in CI:
#   bench/search.sh                  50,000 documents, table to bench/results/<date>-search.md
#   bench/search.sh --docs 5000      a smaller corpus
# The corpus generator and queries come from the shared search benchmark (SEARCH_BENCH, default
# ../shared/search-bench); they are generated from, never copied into the project.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mariadbd >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "search-bench: needs MariaDB (apt-get install mariadb-server)"; exit 1; }
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server) >/dev/null
fi
venv=bench/.venv-search
if [ ! -f "$venv/.installed" ]; then
  rm -rf "$venv" && python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check PyMySQL==1.1.1
  touch "$venv/.installed"
fi
exec "$venv/bin/python" bench/search.py "$@"
