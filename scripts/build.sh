#!/usr/bin/env bash
# Installs what is missing and builds railsim in Release into build/release,
# with the Python module (build/release/python/railsim*.so, for Debian's
# /usr/bin/python3: PYTHONPATH=build/release/python).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DRAILSIM_TESTS=OFF -DRAILSIM_MPI=ON \
      -DRAILSIM_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build/release --target railsim railsim_python -j"$(nproc)"
