#!/usr/bin/env bash
# Puts a CUDA 13.0 toolkit (nvcc, cudart, cuBLAS/cuBLASLt, NCCL 2.28) where scripts/build.sh finds it,
# when the machine has none (no nvcc on PATH, no /usr/local/cuda/bin/nvcc). Debian 12 has no NCCL and
# only CUDA 11.8 (non-free), and NVIDIA's apt repository is not reachable from every machine, so the
# toolkit comes from NVIDIA's wheels on PyPI (nvidia-cuda-nvcc, -runtime, -crt, -cccl, nvidia-nvvm,
# nvidia-cublas, nvidia-nccl-cu13), which unpack into one toolkit tree: nvidia/cu13/{bin,include,lib}.
# `pip download` only fetches the wheels (no Python environment is changed); they are unzipped into
# $SCALESCOPE_CUDA_HOME (default /opt/scalescope-cuda). Safe to re-run. Nothing here runs a GPU.
set -euo pipefail
PREFIX="${SCALESCOPE_CUDA_HOME:-/opt/scalescope-cuda}"
if [ -n "${CUDACXX:-}" ] || command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-cuda: a CUDA toolkit is already there (nvcc found)" >&2
  exit 0
fi
if [ -x "$PREFIX/bin/nvcc" ]; then
  echo "install-cuda: $PREFIX already holds the toolkit" >&2
  exit 0
fi
# Versions of the toolkit the calibration program was built and run with (CUDA 13.0, NCCL 2.28.9).
WHEELS=(nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88
        nvidia-cuda-cccl==13.0.85 nvidia-cublas==13.0.2.14 nvidia-nccl-cu13==2.28.9)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "install-cuda: downloading ${WHEELS[*]}" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp/wheels" "${WHEELS[@]}"
mkdir -p "$tmp/tree"
for w in "$tmp"/wheels/*.whl; do python3 -m zipfile -e "$w" "$tmp/tree"; done
root="$tmp/tree/nvidia/cu13"
# NCCL ships in its own folder of the wheel: into the toolkit's include/ and lib/.
cp -a "$tmp"/tree/nvidia/nccl/include/. "$root/include/"
cp -a "$tmp"/tree/nvidia/nccl/lib/. "$root/lib/"
chmod +x "$root"/bin/* "$root"/nvvm/bin/* 2>/dev/null || true
# Link-time names (libX.so) next to the wheels' runtime names (libX.so.N), as a toolkit install has them.
for so in "$root"/lib/lib*.so.*; do
  base="${so%%.so.*}.so"
  [ -e "$base" ] || ln -s "$(basename "$so")" "$base"
done
# CMake's FindCUDAToolkit looks for lib64/ as well.
[ -e "$root/lib64" ] || ln -s lib "$root/lib64"
mkdir -p "$(dirname "$PREFIX")"
rm -rf "$PREFIX"
mv "$root" "$PREFIX"
echo "install-cuda: CUDA toolkit in $PREFIX ($("$PREFIX/bin/nvcc" --version | tail -1))" >&2
