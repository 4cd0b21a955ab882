#!/usr/bin/env bash
# Session 22, one H200 (nvidia-h200), about 60 s: the blind check of packed-document and sliding-window attention
# pricing. Predictions (validation/attention/packed22/predictions.json, `scalescope calibrate attention-check
# validation/attention/packed22/shapes.json --calibration h200-gpu --format json`) were committed before this ran.
# Criteria, committed with them:
#  - the mechanism holds (varlen kernel = the batched causal kernel of doc tokens the model prices): the varlen
#    kernel's time is within 15% of the batched SDPA kernel's (batched_*) for the uniform packed rows, median;
#  - the profile prices it (the check of the prediction): median |error| of the predicted forward and backward
#    times against the varlen kernel <= 20% over the packed and windowed rows; worse means the profile's attention
#    rows (batch x heads <= 200, seq >= 128) do not reach these shapes, and the calibration must measure them.
# Lands in $OUT/packed22.tar.gz (the measurement, nvidia-smi, environment).
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/packed22
mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
python3 validation/attention/measure_packed.py "$W/measured.json" --shapes validation/attention/packed22/shapes.json \
  2> "$W/log.txt"
echo "measure_packed.py exit $?" >> "$W/log.txt"
tar czf "$OUT/packed22.tar.gz" -C /tmp packed22
tail -5 "$W/log.txt"
