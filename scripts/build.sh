#!/usr/bin/env bash
# Configures and builds scalescope into ./build (preset "default", or the preset given as $1).
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET="${1:-default}"
# The CUDA toolkit lives outside PATH on many machines; the GPU program is built when nvcc is found.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
cmake --preset "$PRESET" -G Ninja
cmake --build --preset "$PRESET" -j "$(nproc)"
