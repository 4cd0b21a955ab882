#!/usr/bin/env bash
# The default job on built-in data: NCCL all_reduce on the measured 4x H200 box, then one simulated
# training step of Llama-1B on it, both from the checked-in H200 calibration profile.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SCALESCOPE_BIN:-build/cli/scalescope}
echo "== scalescope collective --cluster hgx-h200-4 --op all_reduce --gpus 4 --sizes 1K:1G --step-factor 4 --calibration h200x4" >&2
"$BIN" collective --cluster hgx-h200-4 --op all_reduce --gpus 4 --sizes 1K:1G --step-factor 4 --calibration h200x4
echo "== scalescope simulate --model validation/models/llama-1b.json --cluster hgx-h200-4 --plan tp=1,pp=1,dp=4,mbs=2,gbs=16 --calibration h200x4" >&2
"$BIN" simulate --model validation/models/llama-1b.json --cluster hgx-h200-4 \
  --plan "tp=1,pp=1,dp=4,zero=0,mbs=2,gbs=16,schedule=1f1b" --calibration h200x4
