#!/usr/bin/env bash
# Device session 8, second call (nvidia-h200-x2 or GPUs 0-1 of -x4): which torch op launches the FSDP2 runs'
# "TensorListMetadata" multi_tensor_apply kernels (35 ms of a 0.92 s ZeRO-3 llama-7b step on 4 GPUs, 61 ms of a
# 1.75 s ZeRO-2 one on 2 GPUs; the model has nothing for them)? Kept traces of ZeRO-3 and ZeRO-2 llama-1b
# (2 GPUs, mbs 2, gbs 16, 2 profiled steps), shrunk to GPU events with their CPU ops by trace_gpu_ops.py.
# Usage on the device from the repo root: bash validation/device/session_fsdp8.sh  (results -> $OUT)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=/tmp/fsdp8; rm -rf $D; mkdir -p $D  # unpacked into validation/h200-session8/x2-fsdp/
source validation/device/guard.sh
LOG=$OUT/session.log
device_environment $OUT/environment.txt
echo "== $(date -u +%T) fsdp traces" | tee -a $LOG
CUDA_VISIBLE_DEVICES=0,1 timeout 150 torchrun --nproc-per-node 2 validation/harness/profile_step.py --steps 2 --warmup 3 \
  --keep-traces --out $D --configs zero3:llama-1b:2:16 zero2:llama-1b:2:16 2>&1 | grep -v -i warn >> $LOG
python3 validation/harness/trace_gpu_ops.py $D 2>&1 | tee -a $LOG
tar czf $OUT/fsdp8.tar.gz --exclude='trace-*rank[0-9].json.gz' -C $D .
uptime | tee -a $LOG
