#!/usr/bin/env bash
# Device session 8, third call (nvidia-h200-x4): the harness on a model never measured before, qwen2-1.5b
# (Qwen2-1.5B shape, untied: vocabulary 151,936 on hidden 1536, 2 KV heads), every family on 1, 2 and 4 GPUs in
# the harness's budget. Predicted and committed BEFORE this run (validation/h200x4-qwen2/predicted-before-measuring.json).
# Usage on the device from the repo root: bash validation/device/session_qwen8.sh  (results -> $OUT/harness.tar.gz)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
source validation/device/guard.sh
device_environment $OUT/environment.txt
timeout 500 bash validation/harness/run_all.sh validation/h200x4-qwen2 --sizes "1 2 4" --total-budget-s 430 -- \
  --models validation/models/qwen2-1.5b.json 2>&1 | tee $OUT/harness.stdout | grep -E "^(n=|#|ok|skip|OOM|FAIL)|measured|budget" | tail -60
[ -f $OUT/harness.tar.gz ] || tar czf $OUT/harness.tar.gz validation/h200x4-qwen2  # cut off before run_all packed it
uptime | tee -a $OUT/environment.txt
