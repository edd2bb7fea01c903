#!/usr/bin/env bash
# The whole test suite: formatting, lints, every Rust test (a smoke of every fuzz target among them), real third-party clients against the
# demo (every tool of every endpoint, with the Python and TypeScript SDKs), the README's first
# command exactly as printed, a smoke run of the benchmark harness, the official MCP conformance runs (server and
# authorization server), the OAuth consent page and the ops console in headless Chromium, the
# alerting rules and dashboard (promtool), and the production build (no simulators). Needs root
# or sudo for Debian's chromium, postgresql and prometheus on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# A throwaway PostgreSQL for the audit table's PostgreSQL test (installed from Debian if missing).
. scripts/postgres.sh
start_postgres
# Redis for the shared rate limits' tests (installed from Debian if missing; each test starts its own).
. scripts/redis.sh
install_redis
# nginx in front of three instances for the cluster test (installed from Debian if missing).
. scripts/nginx.sh
install_nginx
# Prometheus for the metrics test, and promtool for the shipped alerting rules and dashboard.
. scripts/prometheus.sh
install_prometheus
check_monitoring
# The disk-full tests mount size-limited tmpfs filesystems of their own, which needs root.
if [ "$(id -u)" = 0 ]; then export CONCIERGE_TEST_TINY_FS=1; fi
cargo test --workspace --locked
scripts/interop.sh target/debug/concierge
# The README's first command as printed (a release build, beside any running demo).
scripts/readme-demo.sh
bench/run.sh --smoke
scripts/conformance.sh target/debug/concierge
scripts/conformance-oauth.sh target/debug/concierge
scripts/consent-browser.sh
scripts/ops-browser.sh
# Last: it leaves target/debug/concierge built without the simulators.
scripts/production-build.sh
