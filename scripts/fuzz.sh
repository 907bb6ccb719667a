#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, with ASan + UBSan) and runs each for the
# given number of seconds, starting from its committed seed corpus
# fuzz/corpus/<name>/ and replaying fuzz/regressions/<name>/ (inputs that once
# crashed). A crash fails the run; its input is left in the build directory and belongs
# in fuzz/regressions/<name>/ once fixed.
#
# Usage: fuzz.sh [seconds] [build-dir]. A build directory configured with
# RAILSIM_FUZZ=ON (scripts/test.sh's sanitizer build is) is reused; without
# one, build/fuzz is configured here.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
build="${2:-build/fuzz}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  if [[ "$build" == build/asan ]]; then
    cmake --preset asan >/dev/null  # CMakePresets.json (tests too)
  else
    cmake -S . -B "$build" --preset asan -DRAILSIM_TESTS=OFF >/dev/null
  fi
fi
targets=$(cd fuzz && ls *_fuzzer.cc | sed 's/\.cc$//')
cmake --build "$build" -j"$(nproc)" --target $targets
for target in "$build"/*_fuzzer; do
  name="$(basename "$target")"
  kind="${name%_fuzzer}"
  work="$build/work/$kind"
  mkdir -p "$work" "fuzz/regressions/$kind"
  echo "-- $name: ${seconds}s" >&2
  log="$build/$kind.log"
  if ! "$target" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$build/$kind-" -print_final_stats=1 \
      "$work" "fuzz/corpus/$kind" "fuzz/regressions/$kind" >"$log" 2>&1; then
    grep -E "ERROR|SUMMARY|Test unit written" "$log" >&2 || tail -n 20 "$log" >&2
    echo "railsim: $name found a crash (input in $build/)" >&2
    exit 1
  fi
  grep -E "^stat::number_of_executed_units" "$log" >&2 || true
done
