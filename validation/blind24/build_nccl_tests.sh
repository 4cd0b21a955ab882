#!/usr/bin/env bash
# Builds NVIDIA/nccl-tests (no MPI: -g N and -t N modes) for sm_90 into devbin/nccl-tests.tar.gz, for the device session
# validation/device/session_blind24.sh (its NCCL launch-mode stage). Run on the CPU machine that builds devbin/:
#   bash validation/blind24/build_nccl_tests.sh [SRC_GIT_DIR]
# SRC_GIT_DIR: a git directory of https://github.com/NVIDIA/nccl-tests (default: the mirror /work/.mirror/...).
# Needs nvcc (CUDA 13) and nccl.h + libnccl.so (NCCL 2.28, as PyTorch cu130's wheel ships); the binaries link
# libnccl.so.2 and libcudart.so.13 dynamically (on the device: the pip wheels' lib folders, LD_LIBRARY_PATH).
set -euo pipefail
SRC=${1:-/work/.mirror/NVIDIA+nccl-tests/repo}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DST=$ROOT/devbin/nccl-tests
B=$(mktemp -d /tmp/nccl-tests-build.XXXXXX)
git --git-dir="$SRC" archive HEAD | tar x -C "$B"
COMMIT=$(git --git-dir="$SRC" rev-parse HEAD)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NCCL_HOME=${NCCL_HOME:-$(dirname "$(dirname "$(readlink -f "$(ls $CUDA_HOME/lib*/libnccl.so* /usr/local/lib/libnccl.so* 2>/dev/null | head -1)")")")}
make -C "$B/src" -j"${JOBS:-2}" MPI=0 CUDA_HOME="$CUDA_HOME" NCCL_HOME="$NCCL_HOME" \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$B/build" \
  "$B/build/all_reduce_perf" "$B/build/all_gather_perf" "$B/build/reduce_scatter_perf" "$B/build/alltoall_perf"
rm -rf "$DST"; mkdir -p "$DST"
cp "$B"/build/{all_reduce,all_gather,reduce_scatter,alltoall}_perf "$DST"/
strip "$DST"/*_perf
echo "nccl-tests $COMMIT built $(date -u +%FT%TZ) with $($CUDA_HOME/bin/nvcc --version | grep release) against $NCCL_HOME" \
  > "$DST/BUILD"
rm -rf "$B"
# What travels to the device: one compressed file (about 3 MB instead of 18 MB of binaries).
tar czf "$ROOT/devbin/nccl-tests.tar.gz" -C "$ROOT/devbin" nccl-tests
cat "$DST/BUILD"; ls -la "$DST" "$ROOT/devbin/nccl-tests.tar.gz"
