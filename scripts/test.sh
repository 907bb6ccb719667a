#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, then
#  1. Release build, every test (unit, accuracy, end-to-end on the binary),
#     then the Python module's tests (pytest, against the binary's JSON);
#  2. AddressSanitizer + UndefinedBehaviorSanitizer build (clang), every test
#     again;
#  3. the same build's libFuzzer targets, each for a bounded time from
#     fuzz/corpus.
# Set RAILSIM_FUZZ_SECONDS to change the per-target fuzzing time (default 6).
set -euo pipefail
cd "$(dirname "$0")/.."
# chromium: the report's page is tested in it, headless.
bash scripts/deps.sh clang libclang-rt-14-dev chromium
jobs="$(nproc)"
# Each stage says when it starts, in seconds since this script did.
stage() { echo "== $1 (at ${SECONDS}s)" >&2; }

stage "release build and tests"
cmake --preset ci >/dev/null  # CMakePresets.json: Release, every test, warnings as errors
cmake --build build/release -j"$jobs"
(cd build/release && ctest --output-on-failure -j"$jobs")
stage "python module tests"
RAILSIM_BUILD="$PWD/build/release" /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests

stage "sanitizer build (ASan + UBSan, with the fuzz targets) and tests"
# One clang build serves both the tests under the sanitizers and the
# libFuzzer targets (their coverage instrumentation costs the tests little;
# a second build of the library cost CI about 4 minutes). -O1 and line
# tables: all a sanitizer report needs, in less than half the time of -O2 -g.
cmake --preset asan >/dev/null
cmake --build build/asan -j"$jobs"
# End-to-end runs of whole studies (compare and its scenarios, the report in
# Chromium, the determinism and progress checks that run them twice, the
# cluster replays of whole traces) take
# 30-210 s each under the sanitizers and run code the unit tests and the
# bad-input matrix already run there: they stay in the release stage.
slow_e2e='^DocsOutputsTest\.Every|^CliTest\.(JsonOutputIsDeterministic|Compare|BlackwellRacks|ProgressLineOnlyAtATerminal)|^ReportTest\.|^DocsTest\.EveryJsonKey|^ClusterCommandTest\.'
(cd build/asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/../../scripts/lsan.supp:print_suppressions=0" \
   ctest --output-on-failure -j"$jobs" -E "$slow_e2e")

stage "fuzzing"
bash scripts/fuzz.sh "${RAILSIM_FUZZ_SECONDS:-6}" build/asan
echo "railsim: all tests passed in ${SECONDS}s" >&2
