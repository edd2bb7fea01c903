#!/usr/bin/env bash
# The whole test suite: formatting, lints, every Rust test (a smoke of every fuzz target among them), the book (docs/), real third-party clients against the
# demo (every tool of every endpoint, with the Python and TypeScript SDKs), the README's first
# command exactly as printed, a smoke run of the benchmark harness, the official MCP conformance runs (server and
# authorization server), the OAuth consent page and the ops console in headless Chromium, the
# alerting rules and dashboard (promtool), and the production build (no simulators). Needs root
# or sudo for Debian's chromium, postgresql, mariadb-server and prometheus on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's start, minutes into the run: where CI's time goes.
step() { printf 'test.sh: %2d:%02d %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
step "cargo fmt"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
# A throwaway PostgreSQL for the audit table's PostgreSQL test (installed from Debian if missing).
. scripts/postgres.sh
step "start_postgres"
start_postgres
# A throwaway MariaDB for the SQL tools' tests (installed from Debian if missing).
. scripts/mariadb.sh
step "start_mariadb"
start_mariadb
# Redis for the shared rate limits' tests (installed from Debian if missing; each test starts its own).
. scripts/redis.sh
step "install_redis"
install_redis
# The third-party MCP servers behind `kind = "mcp"` (pinned npm packages, scripts/upstreams/).
. scripts/upstreams.sh
step "install_upstreams"
install_upstreams
install_github_spec
# nginx in front of three instances for the cluster test (installed from Debian if missing).
. scripts/nginx.sh
step "install_nginx"
install_nginx
# Prometheus for the metrics test, and promtool for the shipped alerting rules and dashboard.
. scripts/prometheus.sh
step "install_prometheus"
install_prometheus
check_monitoring
# The disk-full tests mount size-limited tmpfs filesystems of their own, which needs root.
if [ "$(id -u)" = 0 ]; then export CONCIERGE_TEST_TINY_FS=1; fi
step "cargo test"
cargo test --workspace --locked
# The book: built with warnings as errors, its links and anchors, its TOML examples checked.
step "scripts/docs.sh"
scripts/docs.sh target/debug/concierge
step "scripts/interop.sh"
scripts/interop.sh target/debug/concierge
# The README's first command as printed (a debug build like the tests', beside any running demo).
step "scripts/readme-demo.sh"
scripts/readme-demo.sh
step "bench/run.sh"
bench/run.sh --smoke
step "scripts/conformance.sh"
scripts/conformance.sh target/debug/concierge
step "scripts/conformance-oauth.sh"
scripts/conformance-oauth.sh target/debug/concierge
step "scripts/consent-browser.sh"
scripts/consent-browser.sh
step "scripts/ops-browser.sh"
scripts/ops-browser.sh
# Last: it leaves target/debug/concierge built without the simulators.
step "scripts/production-build.sh"
scripts/production-build.sh
step "done"
