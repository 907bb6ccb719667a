#!/usr/bin/env bash
# Installs what is missing and builds railsim in Release into build/release,
# with the Python module (build/release/python/railsim*.so, for Debian's
# /usr/bin/python3: PYTHONPATH=build/release/python).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset release >/dev/null  # CMakePresets.json
cmake --build build/release --target railsim railsim_python -j"$(nproc)"
