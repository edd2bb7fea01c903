#!/usr/bin/env bash
# The whole test suite: formatting, lints, every Rust test, real third-party clients against the
# demo, a smoke run of the benchmark harness, and the official MCP conformance run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
scripts/interop.sh target/debug/concierge
bench/run.sh --smoke
scripts/conformance.sh target/debug/concierge
