#!/usr/bin/env bash
# Installs what is missing and builds railsim in Release into build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DRAILSIM_TESTS=OFF -DRAILSIM_MPI=ON >/dev/null
cmake --build build/release --target railsim -j"$(nproc)"
