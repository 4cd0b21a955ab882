#!/usr/bin/env bash
# Installs the Debian packages scalescope builds with (needs root or sudo). Safe to re-run.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS=(cmake ninja-build g++ libboost-graph-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
      libtbb-dev libgtest-dev libgmock-dev libbenchmark-dev qt6-base-dev libqt6charts6-dev libqt6svg6-dev
      xvfb xauth python3-dev python3-venv libopenmpi-dev openmpi-bin)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "install-deps: all packages present" >&2
fi
