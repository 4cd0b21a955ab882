#!/usr/bin/env bash
# Builds the Megatron-Core + Transformer Engine bundle that validation/device/session39_te.sh carries to a lease
# (run HERE, on the project's machine, which reaches PyPI; the lease reaches nothing): build-lease/te/site.tar.xz, a
# pip --target tree of
#   transformer-engine 2.20.2 (the Python package), transformer-engine-cu13 2.20.2 (the core library; its fatbin
#   entries for GPUs other than sm_90 zeroed in place by te_prune_fatbin.py, so that the archive fits the 64 MiB a
#   call may carry: 24 MB compressed instead of 276), transformer_engine_torch 2.20.2 (TE's PyTorch extension, which
#   PyPI has as source only: compiled here against torch 2.11.0+cu130, the lease's), megatron-core 0.16.1, einops,
#   pydantic and what they need.
# About 30 minutes on 2 cores (the extension's 33 C++ files), once; needs CUDA 13's headers (/usr/local/cuda) and
# Python 3.12 (pyenv). Usage: bash validation/device/te_bundle.sh [WORKDIR (default /tmp/te)]
set -euo pipefail
W="${1:-/tmp/te}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TE=2.20.2
PY312="${PY312:-$HOME/.pyenv/versions/3.12.1/bin/python}"
mkdir -p "$W" && cd "$W"
fetch() {  # fetch NAME FILE-PATTERN: the file of PyPI's simple index that matches
  local url
  url=$(curl -fsS "https://pypi.org/simple/$1/" | grep -o 'href="[^"]*"' | sed 's/href="//;s/"$//;s/#.*//' |
        grep -E "$2" | head -1)
  [ -n "$url" ] || { echo "te_bundle.sh: no $2 on PyPI's $1" >&2; exit 1; }
  [ -s "$(basename "$url")" ] || curl -fsSL -o "$(basename "$url")" "$url"
  basename "$url"
}
[ -x venv/bin/python ] || "$PY312" -m venv venv
venv/bin/pip install -q torch==2.11.0 numpy setuptools wheel pybind11 ninja packaging
core=$(fetch transformer-engine-cu13 "transformer_engine_cu13-$TE-py3-none-manylinux_2_28_x86_64.whl")
meta=$(fetch transformer-engine "transformer_engine-$TE-py3-none-any.whl")
src=$(fetch transformer-engine-torch "transformer_engine_torch-$TE.tar.gz")
venv/bin/pip install -q --no-deps "$core" "$meta"
# TE's PyPI package is built with NVTE_RELEASE_BUILD; its PyTorch extension compiles against the core's headers.
if ! ls built/transformer_engine_torch-$TE-*.whl >/dev/null 2>&1; then
  rm -rf "transformer_engine_torch-$TE" && tar xzf "$src"
  (cd "transformer_engine_torch-$TE" &&
   PATH="$W/venv/bin:/usr/local/cuda/bin:$PATH" MAX_JOBS="${MAX_JOBS:-2}" \
   CPLUS_INCLUDE_PATH="$W/venv/lib/python3.12/site-packages/nvidia/nccl/include" \
   "$W/venv/bin/pip" wheel -q --no-deps --no-build-isolation -w "$W/built" .)
fi
mkdir -p wheels
(cd wheels && python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
   --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
   --platform manylinux2014_x86_64 -d . megatron-core==0.16.1 einops pydantic==2.14.4 pydantic_core==2.50.5 \
   annotated_types typing_inspection "typing_extensions>=4.16")
rm -rf site && mkdir site
venv/bin/pip install -q --no-deps --no-compile --target site "$core" "$meta" built/transformer_engine_torch-$TE-*.whl \
  wheels/*.whl
python3 "$ROOT/validation/device/te_prune_fatbin.py" site/transformer_engine/wheel_lib/libtransformer_engine.so 90
rm -f site/transformer_engine/wheel_lib/libnccl_ep.so  # NCCL EP (TE's expert-parallel backend), unused here
mkdir -p "$ROOT/build-lease/te"
tar cf - -C site . | xz -T2 -6 > "$ROOT/build-lease/te/site.tar.xz.tmp"
mv "$ROOT/build-lease/te/site.tar.xz.tmp" "$ROOT/build-lease/te/site.tar.xz"
ls -la "$ROOT/build-lease/te/site.tar.xz"
