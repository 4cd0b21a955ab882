#!/usr/bin/env bash
# Session 23, one H200, one call (about 40 s): the third blind check of packed and windowed attention
# (validation/attention/packed23/README.md). Before it ran, committed on main: the 12 shapes (check3-shapes.json:
# in neither the session-22 varlen grid nor checks 1-2) and their predictions from packed22/h200-gpu-varlen.json
# with FlashAttention-2 tile counting (check3-predictions-h200-gpu-varlen.json; models/include/scalescope/models/
# attention_tiles.hpp), and from the shipped h200-gpu (check3-predictions-h200-gpu.json).
# Criteria, committed with them:
#  - the tile model carries: median |error| over the 24 forward and backward times <= 12% with h200-gpu-varlen.json;
#  - it does not: the median is above 12%.
# Two rows of the grid are measured again in the same call (controls.json): their difference from the grid is the
# GPU's drift between leases, reported beside the errors, not used to correct them.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/packed23
mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
D=validation/attention/packed23
python3 validation/attention/measure_packed.py "$W/check3-measured.json" --shapes $D/check3-shapes.json 2> "$W/log.txt"
echo "check exit $?" >> "$W/log.txt"
python3 validation/attention/measure_attention.py "$W/controls-measured.json" --shapes $D/controls.json 2>> "$W/log.txt"
echo "controls exit $?" >> "$W/log.txt"
tar czf "$OUT/packed23.tar.gz" -C /tmp packed23
tail -4 "$W/log.txt"
