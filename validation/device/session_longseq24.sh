#!/usr/bin/env bash
# Session 24, one H200, one call (about a minute): attention at the long-sequence shapes of NVIDIA's NeMo Llama 2 7B
# rows (validation/attention/longseq24/README.md), beyond the shipped profiles' 4,096-token grid. Before it ran,
# committed on main: the shapes (shapes.json) and two sets of predictions for the causal ones:
#  - predictions-h200-gpu-{flash,cudnn}.json: the shipped h200-gpu profile, whose rows stop at 4,096 tokens
#    (`scalescope calibrate attention-check`, log-space interpolation of the nearest rows);
#  - predictions-h100-rows.json: session 16's H100 rows at the same shapes, used as they are.
# Criteria, committed with them:
#  - the grid carries to long sequences: median |error| over the causal shapes of 8,192 tokens or more <= 15% with
#    h200-gpu; it does not: above 15% (then plans at those lengths need rows measured at their shapes);
#  - H100 rows stand for the H200 at these compute-bound shapes: median |error| <= 5% (the H100's backward ran 2-6%
#    slower than the H200's on the 4,096-token grid, so its predictions are expected a few per cent slow).
# Diagnostic (no prediction): the unmasked shapes, the blocks of a context-parallel ring's later steps, against the
# causal ones; reading committed first: unmasked runs at >= the causal rate of the same shape (so pricing ring steps
# at the causal rate, models/src/cp_costs.cpp, is conservative by their ratio).
set -uo pipefail
: "${OUT:?run on the device machine (OUT is its output folder)}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/longseq24
mkdir -p "$W"
source validation/device/environment.sh
record_environment "$W/environment.txt"
D=validation/attention/longseq24
python3 validation/attention/measure_attention.py "$W/measured.json" --shapes $D/shapes.json --backend flash,cudnn \
  2> "$W/log.txt"
echo "measure exit $?" >> "$W/log.txt"
tar czf "$OUT/longseq24.tar.gz" -C /tmp longseq24
tail -4 "$W/log.txt"
