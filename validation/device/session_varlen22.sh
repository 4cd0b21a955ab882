#!/usr/bin/env bash
# Session 22, one H200, two calls (about 60 s each):
#   STAGE=grid  bash validation/device/session_varlen22.sh   the varlen calibration grid (varlen-grid.json, 40 rows)
#   STAGE=check bash validation/device/session_varlen22.sh   the second blind check's shapes (check2-shapes.json)
# Between them, on the workstation: the grid imported into a copy of h200-gpu (h200-gpu-varlen.json) and the check's
# predictions from both profiles committed (check2-predictions-*.json). Criteria, committed before the grid ran:
#  - varlen rows in the profile carry: median |error| over the check's packed and windowed forward and backward times
#    <= 12% with h200-gpu-varlen.json, and below the shipped h200-gpu's median on the same rows;
#  - they do not: the median is above 12% or no better than the shipped profile's.
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
: "${STAGE:?STAGE=grid or STAGE=check}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/varlen22-$STAGE
mkdir -p "$W"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
} > "$W/environment.txt" 2>&1
D=validation/attention/packed22
if [ "$STAGE" = grid ]; then
  python3 validation/attention/measure_attention.py "$W/grid-measured.json" --shapes $D/varlen-grid.json 2> "$W/log.txt"
else
  python3 validation/attention/measure_packed.py "$W/check2-measured.json" --shapes $D/check2-shapes.json 2> "$W/log.txt"
fi
echo "exit $?" >> "$W/log.txt"
tar czf "$OUT/varlen22-$STAGE.tar.gz" -C /tmp "varlen22-$STAGE"
tail -3 "$W/log.txt"
