#!/usr/bin/env bash
# Configures and builds scalescope into ./build (preset "default", or the preset given as $1).
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET="${1:-default}"
# The CUDA toolkit lives outside PATH on many machines; the GPU program is built when nvcc is found.
# scripts/install-cuda.sh puts one in ${SCALESCOPE_CUDA_HOME:-/opt/scalescope-cuda} on machines that have none.
for nvcc in /usr/local/cuda/bin/nvcc "${SCALESCOPE_CUDA_HOME:-/opt/scalescope-cuda}/bin/nvcc"; do
  if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x "$nvcc" ]; then export CUDACXX="$nvcc"; fi
done
cmake --preset "$PRESET" -G Ninja
cmake --build --preset "$PRESET" -j "$(nproc)"
