#!/usr/bin/env bash
# Installs the Debian packages scalescope builds with (needs root or sudo). Safe to re-run.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS=(cmake ninja-build g++ libboost-graph-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
      libtbb-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev qt6-base-dev qt6-charts-dev qt6-svg-dev
      libqt6opengl6-dev libgl-dev xvfb xauth)  # Qt6Charts needs Qt6OpenGL (CMake names it when missing)
PKGS+=(clang libclang-rt-14-dev python3 python3-pip ca-certificates)  # preset asan + fuzz/; scripts/install-cuda.sh
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
bash "$(dirname "$0")/install-cuda.sh"  # nvcc, cuBLAS and NCCL when the machine has no CUDA toolkit
