#!/usr/bin/env bash
# Session 24, one H200, one call (under a minute): attention with and without dropout at the NeMo GPT-3 rows' per-rank
# shapes (validation/attention/dropout24/README.md; the reading was committed before the call).
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/dropout24; mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
python3 validation/attention/measure_attention.py "$W/measured.json" --shapes validation/attention/dropout24/shapes.json \
  --backend flash,cudnn 2> "$W/log.txt"
echo "measure exit $?" >> "$W/log.txt"
tar czf "$OUT/dropout24.tar.gz" -C /tmp dropout24
tail -2 "$W/log.txt"
