#!/usr/bin/env bash
# Device session 8, fourth call (nvidia-h200-x4): the rest of the qwen2-1.5b configurations on 2 and 4 GPUs, which
# the third call's budget did not reach (each GPipe out-of-memory held it 90 s in an NCCL timeout). Resumes from
# validation/h200x4-qwen2/runs/n*-summary.json (the config in which a process died is marked failed, not retried),
# with a 30 s collective timeout. Still predicted before measuring: validation/h200x4-qwen2/predicted-before-measuring.json.
# Usage on the device from the repo root: bash validation/device/session_qwen8b.sh  (results -> $OUT/harness.tar.gz)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
source validation/device/guard.sh
device_environment $OUT/environment.txt
timeout 500 bash validation/harness/run_all.sh validation/h200x4-qwen2 --sizes "2 4" --total-budget-s 430 -- \
  --models validation/models/qwen2-1.5b.json --resume --pg-timeout-s 30 2>&1 | tee $OUT/harness.stdout \
  | grep -E "measured  step|FAILED|done" | cut -c1-160 | tail -60
[ -f $OUT/harness.tar.gz ] || tar czf $OUT/harness.tar.gz validation/h200x4-qwen2  # cut off before run_all packed it
uptime | tee -a $OUT/environment.txt
