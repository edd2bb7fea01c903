#!/usr/bin/env bash
# The fuzz targets (fuzz/targets/src/targets/), with cargo-fuzz on the nightly toolchain.
#
#   scripts/fuzz.sh TARGET SECONDS   fuzz one target for SECONDS (release build with debug
#                                    assertions; no sanitizer: the code is safe Rust, and the C
#                                    in the tree, SQLite, is built by cc without instrumentation)
#   scripts/fuzz.sh --smoke [SECS]   every target for SECS seconds (default 4) under libFuzzer (a debug
#                                    build without a sanitizer): a check of the cargo-fuzz build
#                                    after changing fuzz/. The test command's smoke is the stable
#                                    one, `cargo test -p concierge-fuzz` (fuzz/targets/tests/smoke/).
#   scripts/fuzz.sh --list           the targets
#
# Each run starts from the checked-in seeds (fuzz/corpus/TARGET, read only) and keeps what it
# finds in a scratch corpus (target/fuzz-corpus/TARGET). A crash stops the run, leaves the input
# in fuzz/artifacts/TARGET/ and fails; it becomes a regression test (fuzz/README.md says how).
# Extra libFuzzer flags go in FUZZ_FLAGS (e.g. FUZZ_FLAGS="-runs=10000000").
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
  exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version 0.13.2
fi

targets() { sed -n 's/^name = "\(.*\)"/\1/p' fuzz/Cargo.toml | grep -v '^concierge-'; }

# One target for $2 seconds with the build flags in $BUILD; libFuzzer's log in target/fuzz-logs/.
run() {
  local target=$1 seconds=$2 scratch="target/fuzz-corpus/$1" log="target/fuzz-logs/$1.log"
  mkdir -p "$scratch" target/fuzz-logs
  local status=0
  # -rss_limit_mb: a parser that needs gigabytes for a small input is a finding too.
  (cd fuzz && cargo +nightly fuzz run $BUILD "$target" "$PWD/../$scratch" "$PWD/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    ${FUZZ_FLAGS:-}) >"$log" 2>&1 || status=$?
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if ((status)); then
    echo "fuzz: $target FAILED after ${runs:-?} runs (log: $log)"
    grep -E 'panicked|ERROR|SUMMARY|Test unit written|deadly signal' "$log" | head -20
  else
    echo "fuzz: $target ${seconds}s, ${runs:-?} runs, corpus $(ls "$scratch" | wc -l) new + $(ls "fuzz/corpus/$target" | wc -l) seeds"
  fi
  return "$status"
}

case "${1:-}" in
  --list)
    targets
    ;;
  --smoke)
    seconds=${2:-4}
    BUILD="--dev -s none"
    (cd fuzz && cargo +nightly fuzz build $BUILD)
    failed=()
    for target in $(targets); do
      run "$target" "$seconds" || failed+=("$target")
    done
    if ((${#failed[@]})); then
      echo "fuzz: crashes in ${failed[*]} (inputs in fuzz/artifacts/)" >&2
      exit 1
    fi
    echo "fuzz: smoke passed, $(targets | wc -l) targets"
    ;;
  ""|-*)
    sed -n '2,16p' "$0" >&2
    exit 2
    ;;
  *)
    BUILD="--release -s none"
    run "$1" "${2:?seconds}"
    ;;
esac
