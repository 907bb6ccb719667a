#!/usr/bin/env bash
# Installs the Debian packages railsim builds with, if any is missing.
# Usage: scripts/deps.sh [extra packages...]
set -euo pipefail
packages=(cmake make g++ nlohmann-json3-dev libcli11-dev libfmt-dev googletest libgtest-dev
          libbenchmark-dev libcairo2-dev pkgconf libjs-chart.js libopenmpi-dev openmpi-bin
          pybind11-dev python3-dev python3-pytest python3-pandas python3-matplotlib "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "railsim: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
